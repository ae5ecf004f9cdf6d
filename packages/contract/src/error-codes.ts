/**
 * Every error code the API returns, with its HTTP status, whether a client may
 * retry, whether the answer carries `Retry-After` (`retryAfter`), and the default
 * human message (which never contains submitted values).
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, retryable: false, message: "The request is not valid." },
  too_many_numbers: { status: 400, retryable: false, message: "The request contains more identifiers than allowed." },
  test_number_only: { status: 400, retryable: false, message: "Test numbers and test addresses cannot be used with a live key." },
  invalid_cursor: { status: 400, retryable: false, message: "The cursor is malformed or belongs to another listing." },
  unauthorized: { status: 401, retryable: false, message: "A valid API key is required." },
  insufficient_balance: { status: 402, retryable: false, message: "The balance cannot cover the maximum possible cost of this request." },
  cost_limit_exceeded: { status: 402, retryable: false, message: "The maximum possible cost of this request is higher than max_cost." },
  insufficient_scope: { status: 403, retryable: false, message: "The API key does not have the scope this endpoint needs." },
  service_disabled: { status: 403, retryable: false, message: "A requested check is not available here." },
  sandbox_magic_only: { status: 403, retryable: false, message: "The public sandbox key accepts only documented test numbers and addresses." },
  suspected_enumeration: { status: 403, retryable: false, message: "The request looks like an enumeration of numbers or addresses." },
  not_found: { status: 404, retryable: false, message: "The resource does not exist." },
  method_not_allowed: { status: 405, retryable: false, message: "This method is not allowed on this path." },
  idempotency_key_reused: { status: 409, retryable: false, message: "This Idempotency-Key was used with a different request." },
  idempotency_request_in_progress: { status: 409, retryable: true, retryAfter: true, message: "The first request with this Idempotency-Key is still running." },
  test_key_exists: { status: 409, retryable: false, message: "This address has already received the maximum number of test keys." },
  payload_too_large: { status: 413, retryable: false, message: "The request body is too large." },
  rate_limited: { status: 429, retryable: true, retryAfter: true, message: "Too many requests." },
  daily_cap_reached: { status: 429, retryable: true, retryAfter: true, message: "The daily cap is used up; it resets at 00:00 UTC." },
  spend_cap_reached: { status: 429, retryable: false, retryAfter: true, message: "The spend cap is reached." },
  internal_error: { status: 500, retryable: true, message: "Something went wrong on our side." },
  temporarily_unavailable: { status: 503, retryable: true, retryAfter: true, message: "The service is temporarily unavailable." },
} as const satisfies Record<string, { status: number; retryable: boolean; retryAfter?: true; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

/** What a client should do, shown on the error documentation page. */
export const ERROR_GUIDANCE: Record<ErrorCode, string> = {
  invalid_request: "Malformed JSON, a missing or unknown field, a wrong type, an unknown or duplicated check code, identifiers without a check for their type, more than 20 checks, too many identifier × check pairs, webhook use with the sandbox key, or a webhook endpoint that is not verified for the key's mode. `param` names the field.",
  too_many_numbers: "More than 100 identifiers on POST /v1/lookup, more than 50,000 in a job or uploaded file, or more than 10 with the public sandbox key. Split the list.",
  test_number_only: "A live key was sent a documented test number or an address at the test e-mail domain. Use a test key for test values.",
  invalid_cursor: "Pass `next_cursor` from the previous page of the same listing, unchanged.",
  unauthorized: "The key is missing, malformed, unknown, revoked or expired, or the caller's address is outside the key's allowlist. All cases look the same on purpose.",
  insufficient_balance: "Top up the balance or send fewer identifiers or checks. Money already reserved by running requests counts against the balance.",
  cost_limit_exceeded: "Raise `max_cost.amount` or send fewer identifiers or checks.",
  insufficient_scope: "Use a key that was issued with the scope named in the message.",
  service_disabled: "The check is switched off, not enabled for the account, coming soon, or bulk-only (send it in a job). `param` names the check, or is null when real-time checks are off for the whole account.",
  sandbox_magic_only: "The public sandbox key answers only the documented test values. Get a personal test key for other values.",
  suspected_enumeration: "Requests must not walk ranges of consecutive numbers or families of addresses that differ only by digits or separators.",
  not_found: "The id does not exist, belongs to another account, or its results were purged or passed the retention period.",
  method_not_allowed: "The path exists but not with this method; see the Allow header.",
  idempotency_key_reused: "Use a new Idempotency-Key for a different request body.",
  idempotency_request_in_progress: "Retry later with the same key and body; the stored response will be replayed.",
  test_key_exists: "This address already received 3 test keys in the last 30 days.",
  payload_too_large: "Bodies are limited to 1 MB, and to 4 MB on POST /v1/jobs and /v1/jobs/estimate.",
  rate_limited: "Wait for the number of seconds in Retry-After, then retry with backoff and jitter.",
  daily_cap_reached: "The account's daily cap is used up; Retry-After counts down to 00:00 UTC.",
  spend_cap_reached: "The key's or account's spend cap is reached. Raise the cap or wait for the daily reset.",
  internal_error: "Retry with exponential backoff and the same Idempotency-Key; quote the request id if it persists.",
  temporarily_unavailable: "A data source or the service is overloaded or down. Nothing was charged; retry after Retry-After.",
};
