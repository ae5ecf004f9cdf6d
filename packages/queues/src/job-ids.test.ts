import Ajv from "ajv";
import { createTestEnv, testFleet, type TestEnv } from "../../../tests/support/env";
import { JOBS, type JobName, type JobPayload } from "./catalog";
import { createRedis, waitForRedis, type RedisClient } from "./connection";
import { JOB_IDS, jobIdOf, siblingJobId, takeoverJobId, type JobIdKey } from "./job-ids";
import { Producer } from "./producer";

/**
 * The job id rules: one per catalog job, ids BullMQ accepts, and the exact ids on
 * the wire. The check-worker's reconciler finds the gateway's messages by these ids
 * (jobIdOf on both sides); during a rolling deploy a new reconciler must still find
 * an old producer's message, so a change of format shows here first.
 */

type Sample<N extends JobName> = { key: JobIdKey[N]; payload: JobPayload<N>; id: string };
const SAMPLES: { [N in JobName]: Array<Sample<N>> } = {
  "lookup.complete-test": [{ key: { lookupId: "lkp_AbCd1234Ef" }, payload: { lookupId: "lkp_AbCd1234Ef" }, id: "complete-test-lkp_AbCd1234Ef" }],
  "lookup.run": [{ key: { lookupId: "lkp_AbCd1234Ef" }, payload: { lookupId: "lkp_AbCd1234Ef" }, id: "run-lkp_AbCd1234Ef" }],
  "settle.reservation": [
    { key: { reservationId: "rsv_AbCd1234Ef" }, payload: { reservationId: "rsv_AbCd1234Ef" }, id: "settle-rsv_AbCd1234Ef" },
    { key: { reservationId: "rsv_AbCd1234Ef", chunkNo: 0 }, payload: { reservationId: "rsv_AbCd1234Ef", firstRow: 1, lastRow: 1000 }, id: "settle-rsv_AbCd1234Ef-0" },
    { key: { reservationId: "rsv_AbCd1234Ef", chunkNo: 12 }, payload: { reservationId: "rsv_AbCd1234Ef", firstRow: 12001, lastRow: 13000 }, id: "settle-rsv_AbCd1234Ef-12" },
  ],
  "job.chunk": [
    { key: { jobId: "job_AbCd1234Ef", chunkNo: 0 }, payload: { jobId: "job_AbCd1234Ef", chunkNo: 0 }, id: "chunk-job_AbCd1234Ef-0" },
    { key: { jobId: "job_AbCd1234Ef", chunkNo: 49 }, payload: { jobId: "job_AbCd1234Ef", chunkNo: 49 }, id: "chunk-job_AbCd1234Ef-49" },
  ],
  "job.finish": [{ key: { jobId: "job_AbCd1234Ef" }, payload: { jobId: "job_AbCd1234Ef" }, id: "finish-job_AbCd1234Ef" }],
  "event.dispatch": [{ key: { eventId: "evt_AbCd1234Ef" }, payload: { eventId: "evt_AbCd1234Ef" }, id: "event-evt_AbCd1234Ef" }],
  "delivery.attempt": [
    { key: { deliveryId: "42", attemptNo: 2 }, payload: { deliveryId: "42" }, id: "attempt-42-2" },
    { key: { deliveryId: "42", releasedAt: new Date(1_767_225_600_000) }, payload: { deliveryId: "42" }, id: "release-42-1767225600000" },
  ],
};

const names = Object.keys(JOBS) as JobName[];
const samples = names.flatMap((name) => (SAMPLES[name] as Array<Sample<JobName>>).map((s) => ({ name, ...s })));

/** What BullMQ refuses as a custom id: a `:` (its key separator) or an integer (its own ids). */
const refusedByBullmq = (id: string) => id.includes(":") || `${parseInt(id, 10)}` === id;

it("has an id rule, and samples here, for every job of the catalog, and none for a job it lacks", () => {
  expect(Object.keys(JOB_IDS).sort()).toEqual([...names].sort());
  expect(Object.keys(SAMPLES).sort()).toEqual([...names].sort());
  for (const name of names) expect(SAMPLES[name].length).toBeGreaterThan(0);
});

it("builds the ids on the wire from the catalog's payloads", () => {
  const ajv = new Ajv({ strict: false });
  for (const s of samples) {
    expect(ajv.validate(JOBS[s.name].payload, s.payload)).toBe(true); // the samples are real payloads
    expect({ name: s.name, id: jobIdOf(s.name, s.key) }).toEqual({ name: s.name, id: s.id });
    expect(JOB_IDS[s.name](s.key as never)).toBe(s.id);
  }
});

it("gives BullMQ ids it accepts, and different work different ids", () => {
  for (const s of samples) expect({ id: s.id, refused: refusedByBullmq(s.id) }).toEqual({ id: s.id, refused: false });
  expect(new Set(samples.map((s) => s.id)).size).toBe(samples.length);
  // Ids of different jobs never meet: each job's ids start with words of its own.
  const wordsOf = (name: JobName) => new Set(samples.filter((s) => s.name === name).map((s) => s.id.split("-")[0]));
  for (const a of names) for (const b of names) if (a !== b) expect([...wordsOf(a)].filter((w) => wordsOf(b).has(w))).toEqual([]);
});

it("derives the reconciler's ids from the producer's: a takeover per claim, a sibling per stuck message", () => {
  for (const name of ["job.chunk", "lookup.run"] as const) {
    for (const s of SAMPLES[name] as Array<Sample<typeof name>>) {
      const original = jobIdOf(name, s.key);
      expect(original).toBe(s.id); // what the reconciler looks for is what the producer sent
      const takeovers = [0, 1, 2, 10].map((claims) => takeoverJobId(name, s.key, claims));
      expect(takeovers).toEqual([0, 1, 2, 10].map((claims) => `${s.id}-a${claims}`));
      const siblings = takeovers.map((id) => siblingJobId(id, 1_767_225_600_123));
      expect(siblings).toEqual(takeovers.map((id) => `${id}-r1767225600123`));
      const all = [original, ...takeovers, ...siblings];
      expect(new Set(all).size).toBe(all.length);
      for (const id of all) expect(refusedByBullmq(id)).toBe(false);
    }
  }
  expect(siblingJobId(jobIdOf("job.finish", { jobId: "job_AbCd1234Ef" }), 5)).toBe("finish-job_AbCd1234Ef-r5");
});

describe("on the run's Redis", () => {
  let env: TestEnv;
  let redis: RedisClient;
  let producer: Producer;
  beforeAll(async () => {
    env = await createTestEnv();
    redis = createRedis(env.redisUrl, "producer", "job-ids-test");
    await waitForRedis(redis);
    producer = new Producer(redis, testFleet(env, `${env.redisPrefix}:ids`));
  });
  afterAll(async () => {
    await producer?.close();
    await redis?.quit().catch(() => undefined);
  });

  it("enqueues every sample under its id, once however often it is sent", async () => {
    for (const s of samples) {
      for (let n = 0; n < 2; n += 1) await producer.enqueue(s.name, s.payload as never, { jobId: jobIdOf(s.name, s.key), delayMs: 3_600_000 });
    }
    for (const s of samples) {
      const job = await producer.queue(JOBS[s.name].queue).getJob(s.id);
      expect({ id: job?.id, name: job?.name }).toEqual({ id: s.id, name: s.name });
    }
    const counts = await Promise.all([...new Set(names.map((n) => JOBS[n].queue))].map((q) => producer.queue(q).getDelayedCount()));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(samples.length);
  });
});
