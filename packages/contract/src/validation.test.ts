import { ApiError } from "./api-error";
import { LookupRequest, WaitQuery } from "./schemas/lookup";
import { pointerToParam, validateBody, validateQuery } from "./validation";

/** Distinctive submitted values: none of them may ever appear in an error's text. */
const SECRETS = ["+15551234567", "15551234567", "secret@example.org", "svc_live_xxx"];

function capture(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected an ApiError, nothing was thrown");
}

function expectNoEcho(err: ApiError): void {
  const text = [err.message, err.suggestion ?? ""].join("\n");
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  // The rendered body's human text must not echo either.
  const body = err.toBody("req_test", "https://docs.example.test/errors").error;
  for (const secret of SECRETS) {
    expect(body.message).not.toContain(secret);
    expect(body.suggestion ?? "").not.toContain(secret);
  }
}

describe("pointerToParam", () => {
  it.each([
    ["/numbers/3", "numbers[3]"],
    ["/max_cost/amount", "max_cost.amount"],
    ["/checks/1", "checks[1]"],
    ["/checks", "checks"],
    ["/emails/0/x", "emails[0].x"],
  ])("maps %p to %p", (pointer, param) => {
    expect(pointerToParam(pointer)).toBe(param);
  });

  it("maps the empty pointer (the document root) to null", () => {
    expect(pointerToParam("")).toBeNull();
  });

  it("unescapes JSON pointer tokens", () => {
    expect(pointerToParam("/a~1b/c~0d")).toBe("a/b.c~d");
  });
});

describe("validateBody(LookupRequest)", () => {
  const numbers = ["+15551234567"];

  it("accepts a valid body and fills defaults", () => {
    const body = { numbers: [...numbers], emails: ["secret@example.org"], checks: ["spam", "email"] };
    const out = validateBody<{ wait: number }>(LookupRequest, body);
    expect(out.wait).toBe(10);
  });

  type Case = { name: string; body: unknown; param: string | null };
  const cases: Case[] = [
    { name: "missing checks", body: { numbers: [...numbers] }, param: "checks" },
    {
      name: "wrong type in numbers[3]",
      body: { numbers: ["+15551234567", "+15551234568", "+15551234569", 15551234567], checks: ["spam"] },
      param: "numbers[3]",
    },
    { name: "numbers not an array", body: { numbers: "+15551234567", checks: ["spam"] }, param: "numbers" },
    { name: "wrong type in emails[1]", body: { emails: ["secret@example.org", { x: "secret@example.org" }], checks: ["email"] }, param: "emails[1]" },
    { name: "unknown check code in checks[1]", body: { numbers: [...numbers], checks: ["spam", "svc_live_xxx"] }, param: "checks[1]" },
    { name: "unknown check code that looks like an address", body: { numbers: [...numbers], checks: ["secret@example.org"] }, param: "checks[0]" },
    { name: "21 checks", body: { numbers: [...numbers], checks: Array.from({ length: 21 }, () => "spam") }, param: "checks" },
    { name: "empty checks", body: { numbers: [...numbers], checks: [] }, param: "checks" },
    { name: "wrong type of wait", body: { numbers: [...numbers], checks: ["spam"], wait: "secret@example.org" }, param: "wait" },
    { name: "wrong type of max_cost.amount", body: { numbers: [...numbers], checks: ["spam"], max_cost: { amount: true } }, param: "max_cost.amount" },
    {
      name: "wrong max_cost.currency",
      body: { numbers: [...numbers], checks: ["spam"], max_cost: { amount: "1.00", currency: "svc_live_xxx" } },
      param: "max_cost.currency",
    },
    {
      name: "overlong webhook_endpoint_id",
      body: { numbers: [...numbers], checks: ["spam"], webhook_endpoint_id: "svc_live_xxx".repeat(10) },
      param: "webhook_endpoint_id",
    },
    { name: "unknown top-level field named like a number", body: { numbers: [...numbers], checks: ["spam"], "+15551234567": "secret@example.org" }, param: null },
    { name: "unknown top-level field named like an address", body: { checks: ["spam"], "secret@example.org": "+15551234567" }, param: null },
    { name: "unknown top-level field with a digit run", body: { checks: ["spam"], phone15551234567: "x" }, param: null },
    { name: "unknown top-level field with a plain name", body: { numbers: [...numbers], checks: ["spam"], callback_url: "svc_live_xxx" }, param: "callback_url" },
    { name: "unknown field inside max_cost", body: { numbers: [...numbers], checks: ["spam"], max_cost: { amount: "1.00", "+15551234567": 1 } }, param: "max_cost" },
    { name: "body that is not an object", body: ["+15551234567", "secret@example.org"], param: null },
  ];

  it.each(cases)("$name → invalid_request with param $param, echoing nothing", ({ body, param }) => {
    const err = capture(() => validateBody(LookupRequest, body));
    expect(err.code).toBe("invalid_request");
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.param).toBe(param);
    expect(err.message.length).toBeGreaterThan(0);
    expectNoEcho(err);
  });

  it("names an unknown check code with a suggestion, without echoing it", () => {
    const err = capture(() => validateBody(LookupRequest, { numbers: [...numbers], checks: ["spam", "svc_live_xxx"] }));
    expect(err.message).toMatch(/check code/i);
    expect(err.suggestion).toEqual(expect.any(String));
    expectNoEcho(err);
  });

  it("says the limit for more than 20 checks", () => {
    const err = capture(() => validateBody(LookupRequest, { numbers: [...numbers], checks: Array.from({ length: 21 }, () => "spam") }));
    expect(err.message).toMatch(/20/);
  });

  it("accepts exactly 20 checks", () => {
    expect(() => validateBody(LookupRequest, { numbers: [...numbers], checks: Array.from({ length: 20 }, () => "spam") })).not.toThrow();
  });

  it("does not coerce body types (a numeric string is not a number)", () => {
    const err = capture(() => validateBody(LookupRequest, { numbers: [...numbers], checks: ["spam"], wait: "5" }));
    expect(err.param).toBe("wait");
  });
});

describe("validateQuery(WaitQuery)", () => {
  it("coerces a numeric string to a number", () => {
    const query: Record<string, unknown> = { wait: "5" };
    const out = validateQuery<{ wait: number }>(WaitQuery, query);
    expect(out.wait).toBe(5);
    expect(typeof out.wait).toBe("number");
  });

  it("fills the default when wait is absent", () => {
    expect(validateQuery<{ wait: number }>(WaitQuery, {}).wait).toBe(0);
  });

  it.each([["31"], [31], ["abc"], ["-1"], ["2.5"]])("rejects wait=%p with param wait", (wait) => {
    const err = capture(() => validateQuery(WaitQuery, { wait }));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("wait");
    expect(err.message).not.toContain(String(wait));
  });

  it("rejects unknown query parameters without echoing their names", () => {
    const err = capture(() => validateQuery(WaitQuery, { wait: "1", "+15551234567": "secret@example.org" }));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBeNull();
    expectNoEcho(err);
  });
});
