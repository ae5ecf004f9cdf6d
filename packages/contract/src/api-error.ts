import { ERROR_CODES, type ErrorCode } from "./error-codes";

export type ErrorBody = {
  error: {
    code: ErrorCode;
    message: string;
    status: number;
    retryable: boolean;
    param: string | null;
    suggestion?: string;
    doc_url: string;
    request_id: string;
  };
};

/**
 * The one error type of the API. Handlers throw it; the gateway's error handler
 * renders it. Messages and suggestions are fixed text: never interpolate input.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    options: { message?: string; param?: string | null; suggestion?: string; retryAfterSeconds?: number; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? ERROR_CODES[code].message);
    this.name = "ApiError";
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
    this.param = options.param ?? null;
    this.suggestion = options.suggestion;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  readonly param: string | null;
  readonly suggestion: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;

  toBody(requestId: string, docBaseUrl: string): ErrorBody {
    const body: ErrorBody["error"] = {
      code: this.code,
      message: this.message,
      status: this.status,
      retryable: this.retryable,
      param: this.param,
      doc_url: `${docBaseUrl}#${this.code}`,
      request_id: requestId,
    };
    if (this.suggestion) body.suggestion = this.suggestion;
    return { error: body };
  }
}
