// The four services and the names of their own settings (no dependencies: the image's
// scripts and `npm run up` share it before anything is installed or built).
export const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"];

/** `check-worker`, `DATABASE_URL` → `CHECK_WORKER_DATABASE_URL`: one service's own setting. */
export const settingOf = (service, what) => `${service.toUpperCase().replaceAll("-", "_")}_${what}`;
