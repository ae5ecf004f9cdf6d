import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import type { Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { createConsumer, createRedis, MESSAGE_TAG_FIELD, Producer, QUEUES, waitForRedis } from "@svc/queues";
import { withSpan } from "@svc/process";
import { startTracing } from "../../packages/process/src/tracing/sdk";
import { createTestEnv, tagged, testFleet, type TestEnv } from "../support/env";
import { eventually } from "../support/live";

/**
 * W3C trace context through BullMQ, in one process on the real Redis: the producer
 * stamps each message (one at a time and in bulk) with a typed, validated
 * `traceContext`, and the consumer runs the handler in a span of the same trace,
 * handing it the payload alone. Before tracing starts, nothing is stamped.
 */
let env: TestEnv;
let producerRedis: Redis;
let workerRedis: Redis;
const workers: Worker[] = [];
const producers: Producer[] = [];
let seq = 0;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  env = await createTestEnv();
  producerRedis = createRedis(env.redisUrl, "producer", "trace-queue-producer");
  workerRedis = createRedis(env.redisUrl, "worker", "trace-queue-worker");
  await Promise.all([waitForRedis(producerRedis), waitForRedis(workerRedis)]);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await Promise.all(producers.map((p) => p.close()));
  await Promise.all([producerRedis?.quit(), workerRedis?.quit()]);
});

function fresh(): { prefix: string; producer: Producer } {
  seq += 1;
  const prefix = `${env.redisPrefix}:tq${seq}`;
  const producer = new Producer(producerRedis, testFleet(env, prefix));
  producers.push(producer);
  return { prefix, producer };
}

type Seen = { payload: unknown; traceId: string | undefined; data: Record<string, unknown> };

function consume(prefix: string): { seen: Seen[]; failed: string[] } {
  const seen: Seen[] = [];
  const failed: string[] = [];
  const record = async (payload: unknown, job: Job) => {
    // The message as BullMQ holds it, less the fleet's tag (tests/.../consumer.test.ts covers the tag).
    const { [MESSAGE_TAG_FIELD]: _tag, ...data } = job.data as Record<string, unknown>;
    seen.push({ payload, traceId: trace.getActiveSpan()?.spanContext().traceId, data });
  };
  const worker = createConsumer(QUEUES.checks, { "lookup.complete-test": record, "lookup.run": record, "job.chunk": record }, { connection: workerRedis, fleet: testFleet(env, prefix), concurrency: 5, onError: () => undefined });
  worker.on("failed", (_job, err) => failed.push(err.message));
  void worker.run();
  workers.push(worker);
  return { seen, failed };
}

const LOOKUP = "lkp_abcdefgh12345678";

describe("queue messages and trace context", () => {
  it("with tracing off, carries no trace context and the handler gets the payload", async () => {
    const { prefix, producer } = fresh();
    const { seen } = consume(prefix);
    await producer.enqueue("lookup.run", { lookupId: LOOKUP }, { jobId: `off-${seq}` });
    await eventually(async () => seen.length === 1, 10_000, "message consumed");
    expect(seen[0]?.payload).toEqual({ lookupId: LOOKUP });
    expect(seen[0]?.data).toEqual({ lookupId: LOOKUP });
    expect(seen[0]?.traceId).toBeUndefined();
  });

  describe("with tracing on", () => {
    beforeAll(() => startTracing({ serviceName: "queue-test", exporter, processor: "simple" }));
    beforeEach(() => exporter.reset());

    it("continues the producer's trace in the consumer, one message and a batch of job chunks alike", async () => {
      const { prefix, producer } = fresh();
      const { seen } = consume(prefix);
      let traceId = "";
      await withSpan("request", { kind: "server" }, async (span) => {
        traceId = span?.spanContext().traceId ?? "";
        await producer.enqueue("lookup.run", { lookupId: LOOKUP }, { jobId: `one-${seq}` });
        await producer.enqueueMany("job.chunk", [0, 1, 2].map((chunkNo) => ({ payload: { jobId: "job_abcdefgh12345678", chunkNo }, jobId: `chunk-${seq}-${chunkNo}` })));
      });
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      await eventually(async () => seen.length === 4, 10_000, "four messages consumed");
      for (const s of seen) {
        // The handler runs in the request's trace and sees only its payload.
        expect(s.traceId).toBe(traceId);
        expect(s.payload).not.toHaveProperty("traceContext");
        // The message itself holds the W3C context and nothing else beside the payload.
        expect(Object.keys(s.data).sort()).toEqual([...Object.keys(s.payload as object), "traceContext"].sort());
        expect((s.data.traceContext as { traceparent: string }).traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      }
      await eventually(async () => exporter.getFinishedSpans().filter((s) => s.name === "process checks").length === 4, 5_000, "consumer spans");
      const spans = exporter.getFinishedSpans();
      const sends = spans.filter((s) => s.name === "send checks");
      expect(sends.map((s) => s.attributes["messaging.batch.message_count"]).sort()).toEqual([3, undefined].sort());
      for (const consumer of spans.filter((s) => s.name === "process checks")) {
        expect(consumer.spanContext().traceId).toBe(traceId);
        expect(sends.map((s) => s.spanContext().spanId)).toContain(consumer.parentSpanContext?.spanId);
      }
    });

    it("fails, without retrying, a message whose trace context is not W3C trace context", async () => {
      const { prefix, producer } = fresh();
      const { seen, failed } = consume(prefix);
      const queue = producer.queue(QUEUES.checks);
      // Written with the fleet's key: the trace context itself is what is refused.
      await queue.add("lookup.run", tagged(env, QUEUES.checks, "lookup.run", { lookupId: LOOKUP, traceContext: { traceparent: "00-not-a-trace-01", extra: "+14155550100" } }), { jobId: `bad-${seq}`, attempts: 5 });
      await queue.add("lookup.run", tagged(env, QUEUES.checks, "lookup.run", { lookupId: LOOKUP, traceContext: { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`, tracestate: "x".repeat(600) } }), { jobId: `long-${seq}`, attempts: 5 });
      await eventually(async () => failed.length === 2, 10_000, "both refused");
      expect(failed).toEqual(["invalid payload for job lookup.run", "invalid payload for job lookup.run"]);
      expect(seen).toHaveLength(0);
      const job = await queue.getJob(`bad-${seq}`);
      expect(job?.attemptsMade).toBe(1);
    });

    it("refuses to enqueue a payload with a field of its own named traceContext", async () => {
      const { producer } = fresh();
      await expect(producer.enqueue("lookup.run", { lookupId: LOOKUP, traceContext: { traceparent: "x" } } as never, { jobId: `own-${seq}` })).rejects.toThrow("invalid payload");
    });
  });
});
