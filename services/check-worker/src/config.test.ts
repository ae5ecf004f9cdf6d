import { ConfigError } from "@svc/config";
import { loadServiceConfig } from "../../billing-ledger/src/config";
import { loadCheckWorkerConfig } from "./config";

const required = { CACHE_HASH_SECRET: "cache-secret-that-is-long-enough-0123456789", FLEET_MESSAGE_KEY: "fleet-message-key-that-is-long-enough-0123" };

describe("check-worker configuration: leases and sweeps", () => {
  it("defaults to a 20 s lease renewed every 5 s, 2 s sweeps and 10 s stale times (docs/architecture.md bounds)", () => {
    expect(loadCheckWorkerConfig(required)).toMatchObject({ WORK_LEASE_MS: 20_000, WORK_LEASE_RENEW_MS: 5_000, SWEEP_INTERVAL_MS: 2_000, CHUNK_STALE_MS: 10_000, LOOKUP_STALE_MS: 10_000 });
  });

  it("refuses a renewal interval that leaves no second chance before the attempt gives itself up", () => {
    let error: unknown;
    try {
      loadCheckWorkerConfig({ ...required, WORK_LEASE_MS: "10000", WORK_LEASE_RENEW_MS: "4000" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^WORK_LEASE_RENEW_MS \(4000\) must be at most a third of WORK_LEASE_MS \(10000\)/)]);
    expect(loadCheckWorkerConfig({ ...required, WORK_LEASE_MS: "3000", WORK_LEASE_RENEW_MS: "1000" })).toMatchObject({ WORK_LEASE_MS: 3_000, WORK_LEASE_RENEW_MS: 1_000 });
  });

  it("names a lease that is not a number", () => {
    expect(() => loadCheckWorkerConfig({ ...required, WORK_LEASE_MS: "soon" })).toThrow(/WORK_LEASE_MS/);
  });
});

describe("check-worker configuration: e-mail probe politeness", () => {
  it("defaults to 2 sessions per mail server, 20 recipients per session, a 2-minute back-off and STARTTLS", () => {
    expect(loadCheckWorkerConfig(required)).toMatchObject({ SMTP_MAX_SESSIONS_PER_MX: 2, SMTP_MAX_RCPTS_PER_SESSION: 20, SMTP_MX_BACKOFF_MS: 120_000, SMTP_STARTTLS: true });
  });

  it("refuses out-of-range limits at start-up, naming the variable", () => {
    expect(() => loadCheckWorkerConfig({ ...required, SMTP_MAX_SESSIONS_PER_MX: "0" })).toThrow(/SMTP_MAX_SESSIONS_PER_MX/);
    expect(() => loadCheckWorkerConfig({ ...required, SMTP_MAX_RCPTS_PER_SESSION: "500" })).toThrow(/SMTP_MAX_RCPTS_PER_SESSION/);
    expect(() => loadCheckWorkerConfig({ ...required, SMTP_MX_BACKOFF_MS: "-1" })).toThrow(/SMTP_MX_BACKOFF_MS/);
  });
});

describe("billing-ledger configuration", () => {
  it("settles a chunk whose settlement message was lost 10 s after it finished, sweeping every 5 s", () => {
    expect(loadServiceConfig({ FLEET_MESSAGE_KEY: required.FLEET_MESSAGE_KEY })).toMatchObject({ SWEEP_INTERVAL_MS: 5_000, SWEEP_GRACE_MS: 10_000 });
  });
});
