import { readFileSync } from "node:fs";
import path from "node:path";
import { runClusterDir, startCluster, stopCluster } from "../../../../tests/support/redis-cluster";
import { createRedis, isCluster, slotOf, waitForRedis, type RedisClient } from "../connection";
import { FleetKeys } from "../fleet-keys";
import { noticeChannels } from "./seal";
import { CompletionWaiter, publishCompletion } from "./notifier";

/**
 * Completion notices across a failover of the shard that owns their channel, on a
 * local Redis Cluster of this file's own (a master is killed): once the replica has
 * taken over, a notice published from another connection wakes its waiter again —
 * the subscriber re-subscribes on the new master by itself.
 */
const PREFIX = "notice-failover";
const FLEET = { prefix: PREFIX, keys: new FleetKeys("notice-failover-test-key-0123456789abcdef") };
const CHANNEL = noticeChannels(FLEET.keys, PREFIX)[0] as string;
let dir: string;
let clusterUrl: string;
let publisher: RedisClient;
let subscriber: RedisClient;
let waiter: CompletionWaiter;

jest.setTimeout(60_000);

beforeAll(async () => {
  dir = `${runClusterDir()}-notices`;
  clusterUrl = startCluster(dir);
  const url = clusterUrl;
  publisher = createRedis(url, "producer", "notice-failover-pub");
  subscriber = createRedis(url, "subscriber", "notice-failover-sub");
  await Promise.all([waitForRedis(publisher), waitForRedis(subscriber)]);
  waiter = new CompletionWaiter(subscriber, FLEET);
  await waiter.start();
}, 60_000);

afterAll(async () => {
  waiter?.close();
  await Promise.all([publisher, subscriber].filter(Boolean).map((r) => r.quit().catch(() => undefined)));
  if (dir) stopCluster(dir);
});

/** Publishes `id`'s notice (retrying while the cluster fails over) and says whether a waiter for it woke. */
async function noticeWakes(id: string, waitMs = 10_000): Promise<boolean> {
  const woken = waiter.wait(id, waitMs);
  for (let attempt = 0; ; attempt += 1) {
    try {
      await publishCompletion(publisher, FLEET, id);
      break;
    } catch (err) {
      if (attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return woken;
}

it("wakes waiters again once the channel's shard has failed over", async () => {
  expect(await noticeWakes("lkp_BeforeKill01")).toBe(true);
  const state = JSON.parse(readFileSync(path.join(dir, "cluster.json"), "utf8")) as { ports: number[]; pids: number[] };
  if (!isCluster(publisher)) throw new Error("not a cluster client");
  const owner = publisher.slots[slotOf(CHANNEL)]?.[0] ?? "";
  const port = Number(owner.split(":").pop());
  process.kill(state.pids[state.ports.indexOf(port)] as number, "SIGKILL");
  // The first notices may be lost while the replica takes over (a hint: waiters re-read Postgres);
  // within a few seconds one wakes its waiter, and the next ones do too.
  let recovered = false;
  for (let i = 0; i < 10 && !recovered; i += 1) recovered = await noticeWakes(`lkp_AfterKill${String(i).padStart(3, "0")}`, 3_000);
  expect(recovered).toBe(true);
  expect(await noticeWakes("lkp_AfterKillOK1")).toBe(true);
  expect(await noticeWakes("lkp_AfterKillOK2")).toBe(true);
});

/** A master other than `except` that has a live replica to take over from it, and a key of `prefix` on its slots. */
async function masterWithReplicaAndKey(client: RedisClient, prefix: string, except: string): Promise<{ address: string; key: string }> {
  if (!isCluster(client)) throw new Error("not a cluster client");
  // CLUSTER NODES: <id> <host:port@bus> <flags> <master id> ... ; the client's slot map names masters only.
  const lines = String(await client.cluster("NODES")).split("\n").filter(Boolean).map((l) => l.split(" "));
  const addressOf = new Map(lines.map((f) => [f[0]!, f[1]!.split("@")[0]!]));
  const replicated = new Set(lines.filter((f) => f[2]!.includes("slave") && !f[2]!.includes("fail")).map((f) => addressOf.get(f[3]!)));
  for (let i = 0; i < 10_000; i += 1) {
    const key = `${prefix}:${i}`;
    const owner = client.slots[slotOf(key)]?.[0];
    if (owner && owner !== except && replicated.has(owner)) return { address: owner, key };
  }
  throw new Error("no master with a replica found");
}

it("a master that stops answering without closing its connections (SIGSTOP): its commands go to the promoted replica instead of waiting on it", async () => {
  const worker = createRedis(clusterUrl, "worker", "notice-failover-worker");
  await waitForRedis(worker);
  const state = JSON.parse(readFileSync(path.join(dir, "cluster.json"), "utf8")) as { ports: number[]; pids: number[] };
  if (!isCluster(publisher)) throw new Error("not a cluster client");
  const channelOwner = publisher.slots[slotOf(CHANNEL)]?.[0] ?? "";
  const { address, key } = await masterWithReplicaAndKey(publisher, PREFIX, channelOwner);
  await publisher.set(key, "before");
  const pid = state.pids[state.ports.indexOf(Number(address.split(":").pop()))] as number;
  process.kill(pid, "SIGSTOP");
  let woken = false;
  const wake = setTimeout(() => {
    woken = true;
    process.kill(pid, "SIGCONT");
  }, 30_000);
  try {
    // Sent to the silent master: answered by its promoted replica, before the master wakes.
    await expect(publisher.set(key, "after")).resolves.toBe("OK");
    await expect(worker.blpop(`${key}:list`, 1)).resolves.toBeNull();
    expect(woken).toBe(false);
    expect(publisher.slots[slotOf(key)]?.[0]).not.toBe(address);
  } finally {
    clearTimeout(wake);
    if (!woken) process.kill(pid, "SIGCONT");
    worker.disconnect();
  }
});
