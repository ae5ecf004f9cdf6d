/**
 * Bulk intake, entered here only: the threads that read, validate and plan large
 * request bodies (JSON or CSV forms) fairly between accounts, and the body reader
 * that hands a bulk route's body to them. The jobs feature uses the reader; the
 * process (main.ts, app.ts, ops.ts) builds, measures and closes the threads.
 */
export { BulkIntake, type BulkIntakeOptions } from "./intake";
export { intakeReader, intakeTenant, type AcceptedIntake, type IntakeDeps } from "./receive";
export type { JobFields } from "./intake-task";
