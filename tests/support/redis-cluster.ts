import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";

const SCRIPT = path.resolve(__dirname, "..", "..", "scripts", "redis-cluster.mjs");

/** Where this jest run's local Redis Cluster lives (its servers' pids and nodes.conf files). */
export function runClusterDir(runId = process.env.SVC_TEST_RUN_ID): string {
  if (!runId) throw new Error("tests must run through jest's global setup (npm test)");
  return path.join(process.env.TMPDIR ?? "/tmp", `svc-test-cluster-${runId}`);
}

/**
 * This run's local Redis Cluster (3 masters, 3 replicas on free loopback ports,
 * scripts/redis-cluster.mjs), started by the first test that asks for it and shared by
 * the run's test files (each has its own key prefix); the run's teardown stops it.
 * Returns its REDIS_URL (redis+cluster://...). `flock` keeps two test files starting
 * it at once from starting two.
 */
export function testClusterUrl(): string {
  return startCluster(runClusterDir());
}

/**
 * Starts (or finds running) the cluster in `dir` and returns its REDIS_URL. With `tls`
 * it speaks TLS only (rediss+cluster://) with a CA of its own, `<dir>/ca.pem`.
 */
export function startCluster(dir: string, options: { tls?: boolean } = {}): string {
  const args = [SCRIPT, "start", "--ports", "auto", "--dir", dir, ...(options.tls ? ["--tls"] : [])];
  const result = spawnSync("flock", [`${dir}.lock`, process.execPath, ...args], { encoding: "utf8", timeout: 120_000 });
  if (result.status !== 0) throw new Error(`the local Redis Cluster did not start: ${result.stderr || result.error?.message}`);
  return result.stdout.trim();
}

/** Stops the cluster in `dir` (kills its servers, removes the directory). */
export function stopCluster(dir: string): void {
  spawnSync("flock", [`${dir}.lock`, process.execPath, SCRIPT, "stop", "--dir", dir], { encoding: "utf8", timeout: 30_000 });
  spawnSync("rm", ["-f", `${dir}.lock`]);
}

/**
 * Stops the clusters of runs that ended without their teardown (killed, Ctrl-C) more
 * than `maxAgeMs` ago: their servers keep running otherwise. A run id starts with its
 * start time in base 36 (tests/support/global-setup.ts).
 */
export function stopStaleClusters(maxAgeMs: number): void {
  const tmp = process.env.TMPDIR ?? "/tmp";
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(tmp)) {
    const stamp = /^svc-test-cluster-([0-9a-z]{8})/.exec(name)?.[1];
    const dir = path.join(tmp, name);
    if (!stamp || name.endsWith(".lock") || !existsSync(path.join(dir, "cluster.json"))) continue;
    if (parseInt(stamp, 36) < cutoff) stopCluster(dir);
  }
}
