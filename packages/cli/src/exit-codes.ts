import { APIError, SvcError } from "@svc/sdk";

/**
 * What `svc` exits with. Scripts branch on these; they are part of the CLI's
 * public surface (semver): codes are only ever added.
 */
export const EXIT = {
  /** Done; for `webhooks verify`, the delivery is valid; for `--wait`/`watch`, the job completed. */
  ok: 0,
  /** Done, and the answer is "no": `webhooks verify` found the delivery not valid; a waited-for job ended `failed` or `cancelled`. */
  negative: 1,
  /** The command line is wrong: unknown command or option, a bad value, an unreadable input file, no SVC_API_KEY. Nothing was sent. */
  usage: 2,
  /** The API answered with an error object (4xx or 5xx after the retries the API allows). */
  api: 3,
  /** No answer: connection refused or reset, DNS, TLS, or no answer within the time limit. */
  network: 4,
  /** The API answered something that is not the documented shape (a proxy's page, a cut body). */
  invalidResponse: 5,
  /** A bug in svc itself. */
  internal: 70,
  /** Interrupted (Ctrl-C). A job being waited for keeps running. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake on the command line, found before anything was sent. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The exit code for an error thrown by a command. */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof APIError) return EXIT.api;
  if (err instanceof SvcError) {
    switch (err.code) {
      case "missing_api_key":
      case "invalid_argument":
        return EXIT.usage;
      case "connection_error":
      case "timeout":
        return EXIT.network;
      case "invalid_response":
        return EXIT.invalidResponse;
      default:
        return EXIT.api;
    }
  }
  return EXIT.internal;
}
