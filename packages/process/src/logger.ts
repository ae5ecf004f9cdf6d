import pino, { type Logger as PinoLogger } from "pino";
import { scrubText, scrubValue } from "./scrub";
import { traceLogFields } from "./tracing/api";

export type Logger = PinoLogger;

/** Paths that must never be written, whatever their content. */
const REDACT_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "body",
  "*.body",
  "numbers",
  "*.numbers",
  "emails",
  "*.emails",
  "email",
  "*.email",
  "e164",
  "*.e164",
  "input",
  "*.input",
  "key",
  "*.key",
  "secret",
  "*.secret",
  "password",
  "*.password",
];

/**
 * One pino logger per process. Secrets and personal data are redacted here, at the
 * logger, by path and by pattern, so no call site has to remember to. Lines written
 * inside a traced span carry its `trace_id` and `span_id`.
 */
export function createLogger(service: string, level: string = "info", destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service, pid: process.pid },
      // trace_id/span_id of the active span, so a log line leads to its trace (nothing when tracing is off).
      mixin: traceLogFields,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      formatters: {
        log: (obj) => scrubValue(obj) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === "string" ? scrubText(a) : a)) as typeof args;
          method.apply(this, scrubbed);
        },
      },
      serializers: {
        // `formatters.log` has already turned the error into a scrubbed plain object by now.
        err: (err: unknown) => scrubValue(err instanceof Error ? pino.stdSerializers.err(err) : err),
        // The final message: also covers interpolated arguments (`%j`, `%d`) and the
        // error message pino uses when an error is logged without one.
        msg: (msg: unknown) => (typeof msg === "string" ? scrubText(msg) : msg),
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
