export { createLogger, type Logger } from "./logger";
export { scrubText, scrubValue } from "./scrub";
export { ShutdownManager } from "./shutdown";
