import { ApiError } from "./api-error";
import { ERROR_CODE_LIST, ERROR_CODES, ERROR_GUIDANCE, type ErrorCode } from "./error-codes";

const DOCS = "https://docs.example.test/errors";

describe("ApiError.toBody", () => {
  it("has exactly code, message, status, retryable, param, doc_url and request_id without a suggestion", () => {
    const body = new ApiError("invalid_request", { param: "checks[1]", message: "Unknown check code." }).toBody("req_abc", DOCS);
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error).toStrictEqual({
      code: "invalid_request",
      message: "Unknown check code.",
      status: 400,
      retryable: false,
      param: "checks[1]",
      doc_url: `${DOCS}#invalid_request`,
      request_id: "req_abc",
    });
    expect("suggestion" in body.error).toBe(false);
  });

  it("adds suggestion only when one is given", () => {
    const body = new ApiError("cost_limit_exceeded", { param: "max_cost.amount", suggestion: "Raise max_cost.amount." }).toBody("req_1", DOCS);
    expect(body.error).toStrictEqual({
      code: "cost_limit_exceeded",
      message: ERROR_CODES.cost_limit_exceeded.message,
      status: 402,
      retryable: false,
      param: "max_cost.amount",
      suggestion: "Raise max_cost.amount.",
      doc_url: `${DOCS}#cost_limit_exceeded`,
      request_id: "req_1",
    });
  });

  it("uses null for a missing param and the code's default message", () => {
    const body = new ApiError("not_found").toBody("req_2", DOCS);
    expect(body.error.param).toBeNull();
    expect(body.error.message).toBe(ERROR_CODES.not_found.message);
    expect("suggestion" in body.error).toBe(false);
  });

  it.each(ERROR_CODE_LIST)("takes status and retryable of %s from ERROR_CODES", (code: ErrorCode) => {
    const err = new ApiError(code);
    expect(err.status).toBe(ERROR_CODES[code].status);
    expect(err.retryable).toBe(ERROR_CODES[code].retryable);
    const body = err.toBody("req_x", DOCS).error;
    expect(body.code).toBe(code);
    expect(body.status).toBe(ERROR_CODES[code].status);
    expect(body.retryable).toBe(ERROR_CODES[code].retryable);
    expect(body.doc_url).toBe(`${DOCS}#${code}`);
    expect(Object.keys(body).sort()).toEqual(["code", "doc_url", "message", "param", "request_id", "retryable", "status"]);
  });

  it("is an Error named ApiError", () => {
    const err = new ApiError("rate_limited", { retryAfterSeconds: 3, headers: { "Retry-After": "3" } });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("ApiError");
    expect(err.retryAfterSeconds).toBe(3);
    expect(err.headers).toEqual({ "Retry-After": "3" });
  });
});

describe("ERROR_CODES", () => {
  it("matches the spec's status and retryable table", () => {
    const spec: Record<string, [number, boolean]> = {
      invalid_request: [400, false],
      too_many_numbers: [400, false],
      test_number_only: [400, false],
      invalid_cursor: [400, false],
      unauthorized: [401, false],
      insufficient_balance: [402, false],
      cost_limit_exceeded: [402, false],
      insufficient_scope: [403, false],
      service_disabled: [403, false],
      sandbox_magic_only: [403, false],
      suspected_enumeration: [403, false],
      not_found: [404, false],
      idempotency_key_reused: [409, false],
      idempotency_request_in_progress: [409, true],
      test_key_exists: [409, false],
      payload_too_large: [413, false],
      rate_limited: [429, true],
      daily_cap_reached: [429, true],
      spend_cap_reached: [429, false],
      internal_error: [500, true],
      temporarily_unavailable: [503, true],
    };
    for (const [code, [status, retryable]] of Object.entries(spec)) {
      expect(ERROR_CODES).toHaveProperty(code);
      expect([code, ERROR_CODES[code as ErrorCode].status, ERROR_CODES[code as ErrorCode].retryable]).toEqual([code, status, retryable]);
    }
  });

  it("lists every code in ERROR_CODE_LIST", () => {
    expect([...ERROR_CODE_LIST].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it.each(Object.keys(ERROR_CODES))("%s has a non-empty ERROR_GUIDANCE entry", (code) => {
    expect(typeof ERROR_GUIDANCE[code as ErrorCode]).toBe("string");
    expect(ERROR_GUIDANCE[code as ErrorCode].trim().length).toBeGreaterThan(0);
  });

  it("has no guidance for codes that do not exist", () => {
    expect(Object.keys(ERROR_GUIDANCE).sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it("default messages are fixed text with no placeholders", () => {
    for (const { message } of Object.values(ERROR_CODES)) {
      expect(message.length).toBeGreaterThan(0);
      expect(message).not.toMatch(/\$\{|%s|\{\w+\}/);
    }
  });
});
