import { scrubText, scrubValue } from "./scrub";

const LIVE_KEY = "svc_live_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe";
const TEST_KEY = "svc_test_publicSandboxDemoKey2026v1AbCd0a1b2C";
const AGENT_KEY = "svc_agent_Zz9yXx8wWv7uUt6sSr5qQp4oOn3mMl2kKj";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+b/c=";

describe("scrubText", () => {
  it.each([
    [`key ${LIVE_KEY} rejected`, "key svc_live_[redacted] rejected"],
    [`key=${TEST_KEY}`, "key=svc_test_[redacted]"],
    [`"${AGENT_KEY}"`, '"svc_agent_[redacted]"'],
    [`secret ${SECRET}.`, "secret whsec_[redacted]."],
    ["Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"],
    ["authorization: bearer   opaque-token", "authorization: Bearer [redacted]"],
    ["mail to john.smith+news@example.co.uk failed", "mail to [email] failed"],
    ["<Someone@Example.ORG>", "<[email]>"],
    ["call +12025550101 now", "call [number] now"],
    ["call +1 (202) 555-0101 now", "call [number] now"],
    ["call +1 202-555-0101 now", "call [number] now"],
    ["call +49 30 23125000 now", "call [number] now"],
    ["number=0012025550101", "number=[number]"],
  ])("scrubs %j", (input, output) => {
    expect(scrubText(input)).toBe(output);
  });

  it.each([
    ["postgresql://svc:S3cretPw@postgres:5432/db", "postgresql://[redacted]@postgres:5432/db"],
    ["connect to postgres://svc_gateway:pa%3Ass@10.0.0.5/svc failed", "connect to postgres://[redacted]@10.0.0.5/svc failed"],
    ["redis://:OnlyAPassword@redis:6379", "redis://[redacted]@redis:6379"],
    ["redis+cluster://svc-gateway:pw1@h1:7000,h2:7001", "redis+cluster://[redacted]@h1:7000,h2:7001"],
    ["rediss://user:pw@cache.internal.example:6380/0", "rediss://[redacted]@cache.internal.example:6380/0"],
  ])("scrubs the credentials of a URL whatever its host looks like: %s", (text, scrubbed) => {
    expect(scrubText(text)).toBe(scrubbed);
    expect(scrubValue(new Error(text))).toMatchObject({ message: scrubbed });
  });

  it("leaves URLs without credentials as they are", () => {
    expect(scrubText("see https://docs.example.com/errors#x and redis://redis:6379 and postgresql://svc_gateway@db/x")).toBe(
      "see https://docs.example.com/errors#x and redis://redis:6379 and postgresql://svc_gateway@db/x",
    );
  });

  it("scrubs every occurrence in one string", () => {
    const out = scrubText(`${LIVE_KEY} ${LIVE_KEY} a@example.org b@example.org +12025550101 +12025550102`);
    expect(out).toBe("svc_live_[redacted] svc_live_[redacted] [email] [email] [number] [number]");
  });

  it("scrubs a mistyped or truncated key too", () => {
    expect(scrubText("svc_live_Ab3dEf")).toBe("svc_live_[redacted]");
  });

  it("leaves ordinary text, short numbers and generated ids alone", () => {
    for (const text of ["lookup lkp_4Fq9Zt2 completed in 350 ms", "status 503, retry after 30 s", "job_AbC123 row 42 of 50000", "version 1.2.3"]) {
      expect(scrubText(text)).toBe(text);
    }
  });
});

describe("scrubValue", () => {
  it("scrubs strings in objects and arrays at any depth it walks", () => {
    const out = scrubValue({
      to: "john@example.org",
      numbers: ["+12025550101", "+493023125000"],
      nested: { deeper: { apiKey: LIVE_KEY, list: [{ secret: SECRET }] } },
      count: 3,
      ok: true,
      none: null,
    });
    expect(out).toEqual({
      to: "[email]",
      numbers: ["[number]", "[number]"],
      nested: { deeper: { apiKey: "[redacted]", list: [{ secret: "[redacted]" }] } },
      count: 3,
      ok: true,
      none: null,
    });
  });

  it("scrubs objects nested deeper than it walks instead of passing them through", () => {
    let value: Record<string, unknown> = { email: "deep@example.org", key: LIVE_KEY };
    for (let i = 0; i < 12; i += 1) value = { child: value };
    const text = JSON.stringify(scrubValue(value));
    expect(text).not.toContain("deep@example.org");
    expect(text).not.toContain(LIVE_KEY);
  });

  it("survives circular references", () => {
    const a: Record<string, unknown> = { email: "loop@example.org" };
    a.self = a;
    const text = JSON.stringify(scrubValue(a));
    expect(text).not.toContain("loop@example.org");
  });

  it("turns errors into plain objects with scrubbed message and stack", () => {
    const err = new TypeError(`cannot reach +12025550101 for ${LIVE_KEY}`);
    const out = scrubValue(err) as Record<string, unknown>;
    expect(out.type).toBe("TypeError");
    expect(out.message).toBe("cannot reach [number] for svc_live_[redacted]");
    expect(String(out.stack)).not.toContain("+12025550101");
    expect(String(out.stack)).not.toContain(LIVE_KEY);
  });

  it("keeps generated identifiers and log metadata readable", () => {
    const value = { reqId: "req-1234567890", requestId: "req_12345678", jobId: "job_1234567", time: "2026-11-02T10:20:30.000Z", pid: 1234567, queue: "q-20260101" };
    expect(scrubValue(value)).toEqual(value);
  });

  it("still walks objects placed under an identifier key", () => {
    const text = JSON.stringify(scrubValue({ queue: { name: "lookups", data: { emails: ["a@example.org"], key: LIVE_KEY } } }));
    expect(text).toContain("lookups");
    expect(text).not.toContain("a@example.org");
    expect(text).not.toContain(LIVE_KEY);
  });

  it("leaves numbers, booleans and null as they are", () => {
    expect(scrubValue(42)).toBe(42);
    expect(scrubValue(false)).toBe(false);
    expect(scrubValue(null)).toBeNull();
    expect(scrubValue(undefined)).toBeUndefined();
  });

  it("redacts values under any key that names a secret, whatever the value looks like", () => {
    const out = scrubValue({ apiKey: "abc123", vendor_key: "v-1", clientSecret: "s", accessToken: "t", nested: { secretKey: "x", password: "p" }, keyId: "key_8fK2mQ1x", monkey: "banana" });
    expect(out).toEqual({ apiKey: "[redacted]", vendor_key: "[redacted]", clientSecret: "[redacted]", accessToken: "[redacted]", nested: { secretKey: "[redacted]", password: "[redacted]" }, keyId: "key_8fK2mQ1x", monkey: "banana" });
  });

  it("scrubs quoted-local-part addresses and numbers written with spaced separators", () => {
    expect(scrubText('to "john doe"@example.com now')).toBe("to [email] now");
    expect(scrubText("call +1 - 202 - 555 - 0100")).toBe("call [number]");
  });
});
