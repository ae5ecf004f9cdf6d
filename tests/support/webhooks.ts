import { Webhook } from "standardwebhooks";
import { createLogger } from "@svc/process";
import { createRedis, Producer, waitForRedis } from "@svc/queues";
import { createAccount, createEndpoint, createStore, withTransaction, type Store } from "@svc/store";
import { parseRanges } from "@svc/domain";
import { dataKey as parseDataKey, encryptSecret, newSigningSecret, WebhookTransport, type TransportOptions } from "@svc/webhooks";
import { createTestCertificates, type TestCertificates } from "../../packages/webhooks/src/testing/test-ca";
import type { ReceivedRequest } from "../../packages/webhooks/src/testing/receiver";
import { Dispatcher } from "../../services/webhook-dispatcher/src/dispatcher";
import { serviceEnv, testFleet, type TestEnv } from "./env";

export { WebhookReceiver } from "../../packages/webhooks/src/testing/receiver";
export { createTestCertificates };

/** The documented development setting: loopback receivers are allowed. */
export const LOOPBACK = "127.0.0.0/8";

/** What an independent receiver does: verify with the standardwebhooks package (raw body, 5-minute tolerance). */
export function verifyDelivery<T = Record<string, unknown>>(secret: string, req: ReceivedRequest): T {
  return new Webhook(secret).verify(req.body, {
    "webhook-id": String(req.headers["webhook-id"]),
    "webhook-timestamp": String(req.headers["webhook-timestamp"]),
    "webhook-signature": String(req.headers["webhook-signature"]),
  }) as T;
}

/**
 * For deliveries signed under a moved test clock (outside the library's 5-minute
 * tolerance of the real clock): recompute the signature with the library and compare.
 */
export function signatureMatches(secret: string, req: ReceivedRequest): boolean {
  const ts = Number(req.headers["webhook-timestamp"]);
  const expected = new Webhook(secret).sign(String(req.headers["webhook-id"]), new Date(ts * 1000), req.body);
  return String(req.headers["webhook-signature"]).split(" ").includes(expected);
}

export type InProcessDispatcher = {
  dispatcher: Dispatcher;
  store: Store;
  dataKey: Buffer;
  clock: { now: Date };
  close(): Promise<void>;
};

/**
 * The dispatcher's engine in this process, on the test environment's real Postgres
 * and Redis, with an injectable clock and jitter, delivering over real TLS to
 * loopback receivers trusted through the extra-CA setting.
 */
export async function inProcessDispatcher(env: TestEnv, certs: TestCertificates, opts: { random?: () => number; transport?: Partial<TransportOptions> } = {}): Promise<InProcessDispatcher> {
  const store = createStore({ databaseUrl: env.databaseUrl, poolSize: 10, applicationName: "dispatcher-test" });
  const redis = createRedis(env.redisUrl, "producer", "dispatcher-test");
  await waitForRedis(redis);
  const producer = new Producer(redis, testFleet(env));
  const transport = new WebhookTransport({
    resolve: async () => {
      throw new Error("no DNS in tests");
    },
    policy: { allowedPrivate: parseRanges([LOOPBACK]) },
    extraCa: [certs.caPem],
    ...opts.transport,
  });
  // The environment's key, as the gateway and a dispatcher process of this environment use.
  const dataKey = parseDataKey(serviceEnv(env).DATA_ENCRYPTION_KEY as string);
  const clock = { now: new Date() };
  const dispatcher = new Dispatcher({
    store,
    producer,
    logger: createLogger("dispatcher-test", process.env.TEST_LOG_LEVEL ?? "silent"),
    transport,
    dataKey,
    leaseMs: 15_000,
    now: () => clock.now,
    random: opts.random ?? (() => 0.5),
  });
  return {
    dispatcher,
    store,
    dataKey,
    clock,
    async close() {
      transport.close();
      await producer.close();
      await redis.quit();
      await store.close();
    },
  };
}

export type TestEndpoint = { id: string; secret: string; accountId: string; verificationEventId: string };

/** An endpoint made straight in the store (the API has its own tests), optionally already verified. */
export async function makeEndpoint(
  d: Pick<InProcessDispatcher, "store" | "dataKey" | "clock">,
  opts: { url: string; events?: string[]; livemode?: boolean; accountId?: string; active?: boolean },
): Promise<TestEndpoint> {
  const accountId = opts.accountId ?? (await createAccount(d.store.pool, { name: "Webhook test", balanceMicros: 0n })).id;
  const secret = newSigningSecret();
  const made = await withTransaction(d.store.pool, (client) =>
    createEndpoint(client, {
      accountId,
      livemode: opts.livemode ?? true,
      url: opts.url,
      events: opts.events ?? ["lookup.completed", "job.completed", "balance.low"],
      secretEncrypted: encryptSecret(d.dataKey, secret),
      now: d.clock.now,
    }),
  );
  if (made === "limit_reached") throw new Error("endpoint limit");
  if (opts.active) await d.store.pool.query(`UPDATE webhook_endpoints SET status = 'active', verified_at = $2 WHERE id = $1`, [made.endpoint.id, d.clock.now]);
  return { id: made.endpoint.id, secret, accountId, verificationEventId: made.eventId };
}
