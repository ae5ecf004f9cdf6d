import { BulkIntake } from "./intake";
import { runIntake, type BulkBody, type Intake, type IntakeInput } from "./intake-task";

const SECRET = "intake-test-secret-0123456789abcdef";
const json = (value: unknown): BulkBody => ({ type: "json", bytes: new Uint8Array(Buffer.from(JSON.stringify(value))) });
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `+1212${2_000_000 + 2 * i}`);
const input = (body: unknown, over: Partial<IntakeInput> = {}): IntakeInput => ({
  operation: "createJob",
  body: json(body),
  caller: { isSandbox: false, livemode: false },
  now: Date.parse("2026-11-23T10:00:00Z"),
  jobId: "job_stream",
  ...over,
});
const accepted = (i: Intake) => {
  if (!i.ok) throw new Error(`refused: ${i.refusal.code}`);
  return i;
};

async function readAll(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe("BulkIntake (intake threads)", () => {
  let intake: BulkIntake;
  beforeAll(() => {
    intake = new BulkIntake({ threads: 1, queuePerTenant: 4, maxWaitMs: 30_000, niceIncrement: 0, schedIdle: false, cacheSecret: SECRET });
  });
  afterAll(async () => intake.close());

  it("streams a job's rows as the thread renders them: the same bytes and usage as rendering them at once", async () => {
    const body = { numbers: [...numbers(4_500), "garbage"], checks: ["spam"] };
    const whole = accepted(runIntake(input(body), SECRET));
    const streamed = accepted(await intake.run("account:a", input(body)));
    expect(streamed.rows?.count).toBe(4_501);
    expect(streamed.rows && "chunks" in streamed.rows).toBe(true);
    const text = await readAll((streamed.rows as { chunks: AsyncIterable<Uint8Array> }).chunks);
    expect(text.equals(Buffer.from((whole.rows as { text: Uint8Array }).text))).toBe(true);
    expect(streamed.usage).toBeNull();
    expect(await streamed.usageLater).toEqual(whole.usage);
    expect({ ...streamed, rows: null, usage: null, usageLater: undefined }).toEqual({ ...whole, rows: null, usage: null, usageLater: undefined });
    // Read once: a second reader would see nothing and store a job without rows.
    await expect(readAll((streamed.rows as { chunks: AsyncIterable<Uint8Array> }).chunks)).rejects.toThrow("read once");
  });

  it("frees the thread after the last row even when the rows are never read", async () => {
    const streamed = accepted(await intake.run("account:b", input({ numbers: numbers(6_000), checks: ["spam"] })));
    // Its thread is still rendering (or just done): the slot is taken until the task ends.
    expect(intake.stats.running + intake.stats.queued).toBeLessThanOrEqual(1);
    await streamed.usageLater;
    // The request was refused after its intake (nothing reads its rows): the next one still gets the thread.
    const next = accepted(await intake.run("account:b", input({ numbers: numbers(3), checks: ["spam"] }, { operation: "estimateJob", jobId: null })));
    expect(next.rows).toBeNull();
  });

  it("answers refusals and estimates without a stream", async () => {
    const refused = await intake.run("account:c", input({ numbers: numbers(2), checks: ["spam"], colour: "red" }));
    expect(refused).toMatchObject({ ok: false, refusal: { code: "invalid_request" } });
    const live = accepted(await intake.run("account:c", input({ numbers: numbers(3), checks: ["whatsapp"] }, { operation: "estimateJob", jobId: null, caller: { isSandbox: false, livemode: true } })));
    expect(live.cacheKeys?.number.byteLength).toBe(3 * 32);
    expect(live.rows).toBeNull();
  });
});
