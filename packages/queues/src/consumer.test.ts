import type { Job, Worker } from "bullmq";
import { metrics } from "@svc/metrics";
import { createTestEnv, tagged, testFleet, type TestEnv } from "../../../tests/support/env";
import { redisModes } from "../../../tests/support/redis-modes";
import { JOBS, MESSAGE_TAG_FIELD, QUEUES, type JobPayload } from "./catalog";
import { FleetKeys } from "./fleet-keys";
import { createRedis, waitForRedis, type RedisClient } from "./connection";
import { createConsumer } from "./consumer";
import { Producer } from "./producer";

/**
 * Producer → BullMQ → consumer against the real Redis, one server and a cluster. Each
 * test uses its own sub-prefix under the file's prefix, so queues never see each
 * other's jobs.
 */

type Payload = JobPayload<"lookup.complete-test">;

let env: TestEnv;
let producerRedis: RedisClient;
let workerRedis: RedisClient;
const producers: Producer[] = [];
const workers: Worker[] = [];
const runs: Promise<void>[] = [];
const workerErrors: Error[] = [];
let seq = 0;

beforeAll(async () => {
  env = await createTestEnv();
});

/** Connections to the Redis of one describe.each mode, closed (with its workers and producers) after it. */
function connectTo(urlOf: () => string): void {
  beforeAll(async () => {
    producerRedis = createRedis(urlOf(), "producer", "queues-test-producer");
    workerRedis = createRedis(urlOf(), "worker", "queues-test-worker");
    await Promise.all([waitForRedis(producerRedis), waitForRedis(workerRedis)]);
  });
  afterAll(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
    await Promise.allSettled(runs.splice(0));
    await Promise.all(producers.splice(0).map((p) => p.close()));
    await Promise.all([producerRedis?.quit().catch(() => undefined), workerRedis?.quit().catch(() => undefined)]);
  });
}

afterEach(() => {
  expect(workerErrors).toEqual([]);
});

/** A fresh prefix and producer for one test. */
function freshProducer(): { prefix: string; producer: Producer } {
  seq += 1;
  const prefix = `${env.redisPrefix}:q${seq}`;
  const producer = new Producer(producerRedis, testFleet(env, prefix), (err) => workerErrors.push(err));
  producers.push(producer);
  return { prefix, producer };
}

/** A consumer of the checks queue whose handler records every call. */
function consumer(prefix: string, onCall?: (payload: Payload, job: Job) => void) {
  const calls: Array<{ payload: Payload; jobId: string | undefined }> = [];
  const worker = createConsumer(
    QUEUES.checks,
    {
      "lookup.complete-test": async (payload, job) => {
        calls.push({ payload, jobId: job.id });
        onCall?.(payload, job);
      },
    },
    { connection: workerRedis, fleet: testFleet(env, prefix), concurrency: 1, onError: (err) => workerErrors.push(err) },
  );
  workers.push(worker);
  return { worker, calls };
}

/** `data` as this environment's fleet writes a checks-queue message of `name`. */
const checksMessage = (name: string, data: Record<string, unknown>, keys?: FleetKeys) => tagged(env, QUEUES.checks, name, data, keys);

async function start(worker: Worker): Promise<void> {
  runs.push(worker.run());
  await worker.waitUntilReady();
}

/** Resolves with the job when `worker` emits `event` for `jobId`. Attach before the job can run. */
function jobEvent(worker: Worker, event: "completed" | "failed", jobId: string): Promise<{ job: Job; err?: Error }> {
  return new Promise((resolve) => {
    const listener = (job: Job | undefined, second: unknown) => {
      if (job?.id !== jobId) return;
      worker.off(event, listener as never);
      resolve({ job, err: event === "failed" ? (second as Error) : undefined });
    };
    worker.on(event, listener as never);
  });
}

describe.each(redisModes())("Producer.enqueue + createConsumer on %s", (_mode, urlOf) => {
  connectTo(urlOf);

  it("delivers a valid payload to the handler exactly once", async () => {
    const { prefix, producer } = freshProducer();
    const { worker, calls } = consumer(prefix);
    const jobId = "lkp_Deliver0001";
    const completed = jobEvent(worker, "completed", jobId);

    await producer.enqueue("lookup.complete-test", { lookupId: jobId }, { jobId });
    await start(worker);
    const { job } = await completed;

    expect(calls).toEqual([{ payload: { lookupId: jobId }, jobId }]);
    expect(job.attemptsMade).toBe(1);
    const stored = await producer.queue(QUEUES.checks).getJob(jobId);
    expect(await stored?.getState()).toBe("completed");
    expect(stored?.opts.attempts).toBe(JOBS["lookup.complete-test"].attempts);
    const counts = await producer.queue(QUEUES.checks).getJobCounts("waiting", "active", "delayed", "failed", "completed");
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0, completed: 1 });
    expect(calls).toHaveLength(1);
  });

  it("runs the handler once when the same jobId is enqueued twice", async () => {
    const { prefix, producer } = freshProducer();
    const { worker, calls } = consumer(prefix);
    const jobId = "lkp_Duplicate001";
    const sentinelId = "lkp_Sentinel0001";
    const first = jobEvent(worker, "completed", jobId);

    await producer.enqueue("lookup.complete-test", { lookupId: jobId }, { jobId });
    await producer.enqueue("lookup.complete-test", { lookupId: jobId }, { jobId });
    expect(await producer.queue(QUEUES.checks).getJobCounts("waiting")).toEqual({ waiting: 1 });

    await start(worker);
    await first;

    // A repeat after completion is dropped too. The sentinel is queued behind it on a
    // single-concurrency FIFO worker, so once the sentinel has run any accepted
    // duplicate would already have run.
    const sentinel = jobEvent(worker, "completed", sentinelId);
    await producer.enqueue("lookup.complete-test", { lookupId: jobId }, { jobId });
    await producer.enqueue("lookup.complete-test", { lookupId: sentinelId }, { jobId: sentinelId });
    await sentinel;

    expect(calls.filter((c) => c.jobId === jobId)).toHaveLength(1);
    expect(calls.map((c) => c.jobId)).toEqual([jobId, sentinelId]);
  });

  it.each([
    ["a lookupId that is not a lookup id", { lookupId: "+15551234567" }],
    ["a missing lookupId", {}],
    ["an extra property", { lookupId: "lkp_Extra000001", email: "secret@example.org" }],
    ["a lookupId of the wrong type", { lookupId: 12345678 }],
  ])("never passes a payload with %s to the handler and fails it once, without retries", async (_, payload) => {
    const { prefix, producer } = freshProducer();
    const { worker, calls } = consumer(prefix);
    const jobId = `bad_${seq}_payload`;
    const failed = jobEvent(worker, "failed", jobId);

    // Bypasses Producer.enqueue (and its types) on purpose; allows retries so that
    // "no retry" is the consumer's decision, not the job options'.
    await producer.queue(QUEUES.checks).add("lookup.complete-test", checksMessage("lookup.complete-test", payload), { jobId, attempts: 5, backoff: { type: "fixed", delay: 1 } });
    await start(worker);
    const { job, err } = await failed;

    expect(calls).toEqual([]);
    expect(err?.message).toMatch(/invalid payload/);
    expect(err?.message).not.toContain("+15551234567");
    expect(job.attemptsMade).toBe(1);
    const stored = await producer.queue(QUEUES.checks).getJob(jobId);
    expect(await stored?.getState()).toBe("failed");
    expect(stored?.attemptsMade).toBe(1);
    const counts = await producer.queue(QUEUES.checks).getJobCounts("waiting", "active", "delayed", "failed", "completed");
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 1, completed: 0 });
  });

  const refusedCount = async () => (await metrics.jobsProcessed().get()).values.filter((v) => v.labels.outcome === "refused").reduce((sum, v) => sum + v.value, 0);

  it.each([
    ["no tag (anyone who can write to Redis)", () => ({ lookupId: "lkp_Forged000001" })],
    ["a tag made with another fleet's key", () => checksMessage("lookup.complete-test", { lookupId: "lkp_Forged000002" }, new FleetKeys("another fleet's key, also 32+ characters"))],
    ["a valid tag over other data (the id swapped)", () => ({ ...checksMessage("lookup.complete-test", { lookupId: "lkp_Genuine00001" }), lookupId: "lkp_Forged000003" })],
    ["a valid tag of another job name", () => ({ lookupId: "lkp_Forged000004", [MESSAGE_TAG_FIELD]: testFleet(env).keys.signMessage(QUEUES.checks, "lookup.run", { lookupId: "lkp_Forged000004" }) })],
    ["a valid tag of another queue", () => ({ lookupId: "lkp_Forged000005", [MESSAGE_TAG_FIELD]: testFleet(env).keys.signMessage(QUEUES.webhooks, "lookup.complete-test", { lookupId: "lkp_Forged000005" }) })],
    ["a tag that is not a string", () => ({ lookupId: "lkp_Forged000006", [MESSAGE_TAG_FIELD]: { forged: true } })],
    ["a tag of the right length that is not base64url", () => ({ lookupId: "lkp_Forged000007", [MESSAGE_TAG_FIELD]: "!".repeat(43) })],
  ])("refuses a message with %s: never handled, failed once, counted as refused", async (_, data) => {
    const { prefix, producer } = freshProducer();
    const { worker, calls } = consumer(prefix);
    const jobId = `forged_${seq}`;
    const failed = jobEvent(worker, "failed", jobId);
    const before = await refusedCount();

    await producer.queue(QUEUES.checks).add("lookup.complete-test", data(), { jobId, attempts: 5, backoff: { type: "fixed", delay: 1 } });
    await start(worker);
    const { job, err } = await failed;

    expect(calls).toEqual([]);
    expect(err?.message).toMatch(/message refused/);
    expect(job.attemptsMade).toBe(1);
    expect(await refusedCount()).toBe(before + 1);
  });

  it("accepts a message tagged with the key being rotated in or out (FLEET_MESSAGE_KEY_ACCEPT)", async () => {
    const { prefix, producer } = freshProducer();
    const old = new FleetKeys("the key this fleet used until the rotation");
    // The consumer signs with the env's key and also accepts the old one.
    const rotating = { prefix, keys: new FleetKeys(env.messageKey, "the key this fleet used until the rotation") };
    const calls: string[] = [];
    const worker = createConsumer(QUEUES.checks, { "lookup.complete-test": async (p) => void calls.push(p.lookupId) }, { connection: workerRedis, fleet: rotating, concurrency: 1, onError: (err) => workerErrors.push(err) });
    workers.push(worker);
    const done = jobEvent(worker, "completed", "lkp_Rotated00001");
    await producer.queue(QUEUES.checks).add("lookup.complete-test", checksMessage("lookup.complete-test", { lookupId: "lkp_Rotated00001" }, old), { jobId: "lkp_Rotated00001" });
    await start(worker);
    await done;
    expect(calls).toEqual(["lkp_Rotated00001"]);
  });

  it("fails a job whose name is not in the catalog once, without calling any handler", async () => {
    const { prefix, producer } = freshProducer();
    const { worker, calls } = consumer(prefix);
    const jobId = "unknown_name_job";
    const failed = jobEvent(worker, "failed", jobId);

    await producer.queue(QUEUES.checks).add("lookup.unknown", { lookupId: "lkp_Unknown00001" }, { jobId, attempts: 5, backoff: { type: "fixed", delay: 1 } });
    await start(worker);
    const { job } = await failed;

    expect(calls).toEqual([]);
    expect(job.attemptsMade).toBe(1);
    expect(await (await producer.queue(QUEUES.checks).getJob(jobId))?.getState()).toBe("failed");
  });

  it("retries a handler failure (the payload was valid)", async () => {
    const { prefix, producer } = freshProducer();
    let attempts = 0;
    const { worker, calls } = consumer(prefix, () => {
      attempts += 1;
      if (attempts === 1) throw new Error("transient");
    });
    const jobId = "lkp_Retry0000001";
    const completed = jobEvent(worker, "completed", jobId);

    await producer.queue(QUEUES.checks).add("lookup.complete-test", checksMessage("lookup.complete-test", { lookupId: jobId }), { jobId, attempts: 3, backoff: { type: "fixed", delay: 1 } });
    await start(worker);
    const { job } = await completed;

    expect(calls).toHaveLength(2);
    expect(job.attemptsMade).toBe(2);
  });
});
