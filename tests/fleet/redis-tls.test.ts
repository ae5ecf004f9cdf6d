import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Cluster } from "ioredis";
import { parseRedisUrl } from "@svc/config";
import { routesKey } from "@svc/sources";
import { createStore, reconcileAccount, type Store } from "@svc/store";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { freePort } from "../observability/support";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";
import { runClusterDir, startCluster, stopCluster } from "../support/redis-cluster";

/**
 * The fleet on a Redis Cluster that speaks only TLS (rediss+cluster://), as managed
 * clusters do, with certificates signed by a private CA: gateway, check-worker and
 * billing-ledger as real processes that trust it through NODE_EXTRA_CA_CERTS. A live
 * lookup crosses every Redis path over TLS (the checks queue, the sharded completion
 * notice, the settlement queue). A service that does not trust the CA refuses to
 * start and says why.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const TOP_UP = 10_000_000n;

let dir: string;
let ca: string;
let env: TestEnv;
let store: Store;
let probe: Cluster;
let live: LiveWorkers | undefined;
let gateway: RunningService | undefined;
let owner: TestKey;

jest.setTimeout(90_000);

beforeAll(async () => {
  dir = `${runClusterDir()}-tls`;
  const redisUrl = startCluster(dir, { tls: true });
  ca = path.join(dir, "ca.pem");
  env = { ...(await createTestEnv()), redisUrl };
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
  owner = await accountWithKey(store, env.keyHashSecret, { mode: "live", balanceMicros: TOP_UP });
  const trust = { NODE_EXTRA_CA_CERTS: ca };
  live = await startLiveWorkers(env, trust);
  gateway = await startService("gateway", env, { PORT: "0", ...trust });
  // The test's own look into the cluster, trusting the same CA.
  const target = parseRedisUrl(redisUrl);
  if (target.mode !== "cluster") throw new Error("expected a cluster URL");
  probe = new Cluster(target.nodes, { redisOptions: { tls: { ca: readFileSync(ca) } } });
  await eventually(async () => probe.get(routesKey(env.redisPrefix, "whatsapp")), 20_000, "routes advertised over TLS");
}, 120_000);

afterAll(async () => {
  probe?.disconnect();
  await Promise.all([gateway?.stop(), live?.stop()]);
  await store?.close();
  if (dir) stopCluster(dir);
});

it("the cluster refuses plain-text clients: the URL really is TLS-only", () => {
  const port = (parseRedisUrl(env.redisUrl) as { nodes: Array<{ port: number }> }).nodes[0]!.port;
  const plain = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "ping"], { encoding: "utf8", timeout: 10_000 });
  expect(plain.stdout).not.toContain("PONG");
  expect(env.redisUrl.startsWith("rediss+cluster://")).toBe(true);
});

it("a live lookup is queued, answered, announced and settled over TLS", async () => {
  const [number] = spacedNumbers(7)(1);
  const res = await fetch(`${gateway!.url}/v1/lookup`, {
    method: "POST",
    headers: { Authorization: `Bearer ${owner.key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ numbers: [number], checks: ["whatsapp"], wait: 20 }),
  });
  const body = (await res.json()) as { status: string; results: Array<{ checks: Array<{ service: string; status: string; billed: boolean }> }> };
  // Answered by the check-worker and handed back to the waiting request by the sharded notice.
  expect({ http: res.status, status: body.status }).toEqual({ http: 200, status: "completed" });
  const [check] = body.results[0]!.checks;
  expect(check).toMatchObject({ service: "whatsapp", billed: true });
  expect(check!.status).not.toBe("pending");

  // Settled by the billing-ledger through its queue: nothing reserved, the charge in the books.
  const books = await eventually(async () => {
    const b = await reconcileAccount(store.pool, owner.accountId);
    return b.reservedMicros === 0n && b.ledgerBalanceMicros < TOP_UP ? b : undefined;
  }, 30_000, "settled");
  expect(books.balanced).toBe(true);
  const { rows } = await store.pool.query<{ charged: string }>(
    `SELECT coalesce(sum(s.amount_micros), 0)::text AS charged FROM settlements s JOIN reservations r ON r.id = s.reservation_id
     WHERE r.account_id = $1 AND s.outcome = 'charged'`,
    [owner.accountId],
  );
  expect(books.ledgerBalanceMicros).toBe(TOP_UP - BigInt(rows[0]!.charged));
});

it("a service that does not trust the cluster's CA refuses to start, naming REDIS_URL and the certificate problem", () => {
  const res = spawnSync(process.execPath, [path.join(ROOT, "services", "gateway", "dist", "main.js")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { PORT: "0" }) },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(res.status).toBe(1);
  expect(res.stderr).toContain("REDIS_URL");
  expect(res.stderr).toMatch(/no cluster node answered \(self[- ]signed certificate in certificate chain\)/);
});

describe("one Redis over TLS (rediss://)", () => {
  let server: ChildProcess | undefined;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    // The cluster's certificate (for 127.0.0.1) serves a single TLS-only server just as well.
    server = spawn("redis-server", ["--port", "0", "--tls-port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--tls-auth-clients", "no",
      "--tls-cert-file", path.join(dir, "server.pem"), "--tls-key-file", path.join(dir, "server.key"), "--tls-ca-cert-file", ca], { stdio: "ignore" });
    url = `rediss://127.0.0.1:${port}`;
    await eventually(async () => /PONG/.test(spawnSync("redis-cli", ["--tls", "--cacert", ca, "-p", String(port), "ping"], { encoding: "utf8" }).stdout ?? ""), 10_000, "TLS redis-server up");
  });

  afterAll(() => {
    server?.kill("SIGKILL");
  });

  it("a gateway trusting the CA starts on it; one that does not names the certificate problem", async () => {
    const trusting = await startService("gateway", { ...env, redisUrl: url }, { PORT: "0", NODE_EXTRA_CA_CERTS: ca });
    try {
      const res = await fetch(`${trusting.url}/v1/lookup`, {
        method: "POST",
        headers: { Authorization: `Bearer ${owner.key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ numbers: spacedNumbers(11)(1), checks: ["spam"], wait: 0 }),
      });
      expect(res.status).toBeLessThan(300); // queued over TLS (nothing consumes this Redis)
    } finally {
      await trusting.stop();
    }
    const refused = spawnSync(process.execPath, [path.join(ROOT, "services", "gateway", "dist", "main.js")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...serviceEnv({ ...env, redisUrl: url }, { PORT: "0" }) },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/\(REDIS_URL\): self[- ]signed certificate/);
  });
});
