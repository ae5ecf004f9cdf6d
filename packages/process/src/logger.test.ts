import { createLogger, type Logger } from "./logger";

const LIVE_KEY = "svc_live_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe";
const TEST_KEY = "svc_test_Qw3eRt6yUi9oPa2sDf5gHj8kLz1xCv4bNm7qWe";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+b/c=";
const EMAIL = "john.smith@example.org";
const PHONE = "+12025550101";
const BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.opaque-session-token";

/** Everything that must never reach a log line, in the forms it could be spotted in. */
const FORBIDDEN = [LIVE_KEY, LIVE_KEY.slice(9), TEST_KEY, TEST_KEY.slice(9), SECRET, SECRET.slice(6), EMAIL, "john.smith", PHONE, "2025550101", "opaque-session-token", "eyJhbGciOiJIUzI1NiJ9"];

function memoryLogger(level = "trace"): { logger: Logger; lines: string[]; text: () => string; records: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const logger = createLogger("unit-test", level, { write: (line: string) => void lines.push(line) });
  return { logger, lines, text: () => lines.join(""), records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function expectClean(text: string): void {
  expect(text.length).toBeGreaterThan(0);
  for (const secret of FORBIDDEN) expect(text).not.toContain(secret);
}

describe("createLogger", () => {
  it("writes one JSON line per call with the service name, level and message", () => {
    const { logger, records } = memoryLogger();
    logger.info({ jobId: "job_AbC123", rows: 42 }, "job started");
    expect(records()).toEqual([expect.objectContaining({ service: "unit-test", level: 30, msg: "job started", jobId: "job_AbC123", rows: 42 })]);
    expect(typeof records()[0]?.time).toBe("string");
  });

  it("honours the level", () => {
    const { logger, lines } = memoryLogger("warn");
    logger.info("hidden");
    logger.warn("shown");
    expect(lines).toHaveLength(1);
  });

  it("scrubs secrets and personal data in message strings", () => {
    const { logger, text, records } = memoryLogger();
    logger.info(`key ${LIVE_KEY} and ${TEST_KEY} used`);
    logger.warn(`webhook secret ${SECRET} rotated`);
    logger.info(`mail to ${EMAIL} bounced`);
    logger.info(`calling ${PHONE} and +1 (202) 555-0101`);
    logger.info(`header Authorization: ${BEARER}`);
    expectClean(text());
    expect(records().map((r) => r.msg)).toEqual([
      "key svc_live_[redacted] and svc_test_[redacted] used",
      "webhook secret whsec_[redacted] rotated",
      "mail to [email] bounced",
      "calling [number] and [number]",
      "header Authorization: Bearer [redacted]",
    ]);
  });

  it("scrubs values interpolated into the message", () => {
    const { logger, text } = memoryLogger();
    logger.info("sent to %s via %s", EMAIL, LIVE_KEY);
    logger.info("payload %j", { to: EMAIL, numbers: [PHONE], secret: SECRET });
    logger.info("payload %o", { auth: BEARER });
    logger.info({ rows: 1 }, "number %s", PHONE);
    logger.info("number %d", 12025550101);
    expectClean(text());
  });

  it("scrubs object fields", () => {
    const { logger, text, records } = memoryLogger();
    logger.info({ apiKey: LIVE_KEY, to: EMAIL, phone: PHONE, signing: SECRET, auth: BEARER, rows: 3 }, "request");
    expectClean(text());
    expect(records()[0]).toMatchObject({ apiKey: "[redacted]", to: "[email]", phone: "[number]", signing: "whsec_[redacted]", rows: 3 });
  });

  it("redacts well-known sensitive fields whatever their content", () => {
    const { logger, records, text } = memoryLogger();
    logger.info({ authorization: BEARER, key: "k-1", secret: "s-1", password: "hunter2", email: "x", numbers: ["1"], body: { a: 1 } }, "top level");
    logger.info({ headers: { authorization: BEARER, "content-type": "application/json" } }, "headers");
    logger.info({ req: { method: "POST", url: "/v1/lookup", headers: { authorization: BEARER, cookie: "session=abc" } } }, "request");
    expectClean(text());
    expect(text()).not.toContain("hunter2");
    expect(text()).not.toContain("session=abc");
    const [top, headers, req] = records();
    expect(top).toMatchObject({ authorization: "[redacted]", key: "[redacted]", secret: "[redacted]", password: "[redacted]", email: "[redacted]", numbers: "[redacted]", body: "[redacted]" });
    expect(headers).toMatchObject({ headers: { authorization: "[redacted]", "content-type": "application/json" } });
    expect(req).toMatchObject({ req: { method: "POST", url: "/v1/lookup", headers: { authorization: "[redacted]", cookie: "[redacted]" } } });
  });

  it("scrubs nested fields and arrays", () => {
    const { logger, text } = memoryLogger();
    logger.info(
      {
        request: { headers: { Authorization: BEARER, "X-Api-Key": LIVE_KEY } },
        job: { rows: [{ value: PHONE }, { value: EMAIL }], webhook: { signing: SECRET } },
        deep: { a: { b: { c: { d: { e: { f: { g: { h: { to: EMAIL, key: LIVE_KEY } } } } } } } } },
      },
      "nested",
    );
    expectClean(text());
  });

  it("scrubs Error messages and stacks however the error is logged", () => {
    const { logger, text, records } = memoryLogger();
    const err = () => new Error(`delivery to ${EMAIL} with ${LIVE_KEY} for ${PHONE} using ${SECRET} failed`);
    logger.error(err());
    logger.error(err(), "with a message");
    logger.error({ err: err() });
    logger.error({ err: err() }, "with a message");
    logger.error({ cause: err(), step: "deliver" }, "nested error");
    logger.error({ err: new Error("outer", { cause: err() }) }, "with cause");
    logger.error(`failed: ${err().message}`);
    expectClean(text());
    expect(records()).toHaveLength(7);
    for (const r of records().slice(0, 4)) {
      const e = r.err as Record<string, unknown>;
      expect(e.message).toBe("delivery to [email] with svc_live_[redacted] for [number] using whsec_[redacted] failed");
      expect(String(e.stack)).toContain("delivery to [email]");
      expect(e.type).toBe("Error");
    }
    expect(records()[0]?.msg).toBe("delivery to [email] with svc_live_[redacted] for [number] using whsec_[redacted] failed");
  });

  it("scrubs what child loggers write", () => {
    const { logger, text, records } = memoryLogger();
    const child = logger.child({ reqId: "req_123" });
    child.info({ to: EMAIL, nested: { key: LIVE_KEY } }, `calling ${PHONE}`);
    child.error(new Error(`bad secret ${SECRET}`));
    expectClean(text());
    expect(records()[0]).toMatchObject({ reqId: "req_123", to: "[email]", msg: "calling [number]" });
  });

  it("keeps request ids and other generated identifiers readable", () => {
    const { logger, records } = memoryLogger();
    logger.info({ reqId: "req_12345678901", jobId: "job_12345678901", queue: "lookups" }, "ids");
    expect(records()[0]).toMatchObject({ reqId: "req_12345678901", jobId: "job_12345678901", queue: "lookups" });
  });
});
