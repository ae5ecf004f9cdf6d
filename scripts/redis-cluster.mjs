#!/usr/bin/env node
// A local Redis Cluster for tests and benchmarks: 3 masters and 3 replicas, each a
// `redis-server` on a loopback port, nothing on disk, a short node timeout so a killed
// master's replica takes over in a second or two.
//
//   node scripts/redis-cluster.mjs start [--ports 7100-7105|auto] [--dir /tmp/svc-redis-cluster] [--tls]
//   node scripts/redis-cluster.mjs stop  [--dir /tmp/svc-redis-cluster]
//
// `start` is idempotent: when the cluster in --dir answers cluster_state:ok it is left as
// it is. It prints the REDIS_URL that reaches it (redis+cluster://127.0.0.1:7100,...) on
// stdout and nothing else there. `--ports auto` takes six free ports (and their cluster-bus
// ports, +10000). `--tls`: clients, the cluster bus and replication speak TLS only
// (rediss+cluster://), with certificates made for the run by openssl and signed by a CA of
// its own, <dir>/ca.pem (give it to clients as NODE_EXTRA_CA_CERTS). `stop` kills the servers
// it started (their pids are in --dir) and removes --dir.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";

const NODES = 6;

/** redis-cli's connection options for the cluster in `dir` (TLS with its CA when it has one). */
function cliTls(dir, tls) {
  return tls ? ["--tls", "--cacert", path.join(dir, "ca.pem")] : [];
}

let cliOptions = [];

function redisCli(port, ...args) {
  return spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...cliOptions, ...args], { encoding: "utf8", timeout: 10_000 });
}

function openssl(dir, ...args) {
  const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

/** A CA of the cluster's own and one server certificate it signs, for 127.0.0.1 and localhost. */
function makeCertificates(dir) {
  openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=svc test cluster CA");
  openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(path.join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n");
  openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext");
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function autoPorts() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ports = Array.from({ length: NODES }, (_, i) => base + i);
    const all = [...ports, ...ports.map((p) => p + 10_000)];
    if ((await Promise.all(all.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error("no six free ports (with their bus ports) found");
}

function parsePorts(text) {
  const m = /^(\d+)-(\d+)$/.exec(text);
  if (!m || Number(m[2]) - Number(m[1]) !== NODES - 1) throw new Error(`--ports must be a range of ${NODES} ports, e.g. 7100-7105, or auto`);
  return Array.from({ length: NODES }, (_, i) => Number(m[1]) + i);
}

function clusterUrl(ports, tls) {
  return `${tls ? "rediss" : "redis"}+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`;
}

function clusterOk(ports) {
  return ports.every((p) => /cluster_state:ok/.test(redisCli(p, "cluster", "info").stdout ?? ""));
}

async function waitFor(what, test, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function start({ ports: portsArg = "7100-7105", dir = "/tmp/svc-redis-cluster", tls = false } = {}) {
  const stateFile = path.join(dir, "cluster.json");
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    cliOptions = cliTls(dir, state.tls);
    if (clusterOk(state.ports)) return clusterUrl(state.ports, state.tls);
    stop({ dir }); // half-started or dead: start again from nothing
  }
  const ports = portsArg === "auto" ? await autoPorts() : parsePorts(portsArg);
  mkdirSync(dir, { recursive: true });
  if (tls) makeCertificates(dir);
  cliOptions = cliTls(dir, tls);
  // TLS only: no plain port; the cluster bus and replication use TLS too.
  const tlsArgs = (port) =>
    tls
      ? ["--port", "0", "--tls-port", String(port), "--tls-cluster", "yes", "--tls-replication", "yes", "--tls-auth-clients", "no",
         "--tls-cert-file", path.join(dir, "server.pem"), "--tls-key-file", path.join(dir, "server.key"), "--tls-ca-cert-file", path.join(dir, "ca.pem")]
      : ["--port", String(port)];
  const pids = [];
  for (const port of ports) {
    const nodeDir = path.join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    const result = spawnSync(
      "redis-server",
      [
        ...tlsArgs(port),
        "--bind", "127.0.0.1",
        "--dir", nodeDir,
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", "1000",
        // A replica takes over whatever the age of its data: the queues are rebuilt from Postgres anyway.
        "--cluster-replica-validity-factor", "0",
        "--save", "",
        "--appendonly", "no",
        "--maxmemory-policy", "noeviction",
        "--daemonize", "yes",
        "--pidfile", path.join(nodeDir, "redis.pid"),
        "--logfile", path.join(nodeDir, "redis.log"),
      ],
      { encoding: "utf8" },
    );
    if (result.status !== 0) throw new Error(`redis-server on port ${port} did not start: ${result.stderr || result.stdout}`);
  }
  for (const port of ports) {
    const pidFile = path.join(dir, String(port), "redis.pid");
    await waitFor(`redis-server on ${port}`, () => existsSync(pidFile) && /PONG/.test(redisCli(port, "ping").stdout ?? ""), 10_000);
    pids.push(Number(readFileSync(pidFile, "utf8").trim()));
  }
  writeFileSync(stateFile, JSON.stringify({ ports, pids, tls }));
  const create = spawnSync(
    "redis-cli",
    [...cliOptions, "--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "1", "--cluster-yes"],
    { encoding: "utf8", timeout: 60_000 },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}\n${create.stderr}`);
  await waitFor("cluster_state:ok on every node", () => clusterOk(ports), 30_000);
  // Every replica attached and in sync, so a killed master always has one to promote.
  await waitFor(
    "every replica in sync",
    () => {
      const nodes = redisCli(ports[0], "cluster", "nodes").stdout ?? "";
      const lines = nodes.split("\n").filter(Boolean);
      const replicas = lines.filter((l) => l.split(" ")[2]?.includes("slave"));
      if (replicas.length !== NODES / 2) return false;
      return replicas.every((l) => {
        const port = Number(/:(\d+)@/.exec(l)?.[1]);
        return /master_link_status:up/.test(redisCli(port, "info", "replication").stdout ?? "");
      });
    },
    30_000,
  );
  return clusterUrl(ports, tls);
}

export function stop({ dir = "/tmp/svc-redis-cluster" } = {}) {
  const stateFile = path.join(dir, "cluster.json");
  if (existsSync(stateFile)) {
    const { pids } = JSON.parse(readFileSync(stateFile, "utf8"));
    for (const pid of pids) {
      // Only a redis-server still holding that pid: a pid of a server long gone may belong to anything now.
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      } catch {
        continue; // already gone (a test killed it)
      }
      if (!cmdline.includes("redis-server")) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone in between
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { ports: { type: "string" }, dir: { type: "string" }, tls: { type: "boolean" } } });
  const command = positionals[0];
  try {
    if (command === "start") process.stdout.write(`${await start({ ports: values.ports, dir: values.dir, tls: values.tls })}\n`);
    else if (command === "stop") stop({ dir: values.dir });
    else {
      process.stderr.write("usage: node scripts/redis-cluster.mjs start|stop [--ports 7100-7105|auto] [--dir DIR] [--tls]\n");
      process.exit(2);
    }
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
