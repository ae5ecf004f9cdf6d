import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";

/** A free loopback port (closed again at once: the service binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One sample of the Prometheus text format. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

/** Parses the Prometheus text exposition format (0.0.4): comments skipped, label values unescaped. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[3] ?? "";
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;
    let lm: RegExpExecArray | null;
    let consumed = 0;
    while ((lm = re.exec(body)) !== null) {
      labels[lm[1] as string] = (lm[2] as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
      consumed = re.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`bad labels in: ${line}`);
    const raw = m[4] as string;
    samples.push({ name: m[1] as string, labels, value: raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw) });
  }
  return samples;
}

export type Scrape = {
  samples: Sample[];
  /** The sum of every sample of `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
  /** Whether any sample of `name` (with `labels`) exists. */
  has(name: string, labels?: Record<string, string>): boolean;
};

function matches(s: Sample, name: string, labels: Record<string, string>): boolean {
  return s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
}

export async function scrape(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = parseExposition(await res.text());
  return {
    samples,
    sum: (name, labels = {}) => samples.filter((s) => matches(s, name, labels)).reduce((a, s) => a + s.value, 0),
    has: (name, labels = {}) => samples.some((s) => matches(s, name, labels)),
  };
}

/** GET a probe: status and JSON body (readiness) or text. */
export async function probe(port: number, path: "/livez" | "/readyz"): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** Polls until `probe` returns true, or fails after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A redis-server of the test's own on a loopback port, so a test can stop Redis
 * under a service (never the shared one). `stop` and `start` keep the port.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  /** `args`: more redis-server options (an `--aclfile`, say). */
  constructor(
    readonly port: number,
    private readonly args: string[] = [],
  ) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    const child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...this.args], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", () => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited:\n${out}`));
      });
    });
  }
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.child = null;
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

/**
 * A TCP relay in front of Postgres: services reach the database through it, and
 * `cut` makes the database unreachable to them (open connections dropped, new ones
 * refused) without touching the shared server. `restore` listens again.
 */
export class PostgresRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private frozen = false;
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  /** `databaseUrl` with its host and port replaced by the relay's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  async start(port = 0): Promise<void> {
    const { createConnection } = await import("node:net");
    const server = createServer((client) => {
      client.on("error", () => undefined);
      if (this.frozen) {
        // Frozen: the connection is taken and never answered.
        this.sockets.add(client);
        client.on("close", () => this.sockets.delete(client));
        client.pause();
        return;
      }
      const upstream = createConnection(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      const pair = { client, upstream };
      this.pairs.add(pair);
      client.pipe(upstream).pipe(client);
      client.on("close", () => (upstream.destroy(), this.pairs.delete(pair)));
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  /**
   * Stops passing bytes either way without closing anything, and answers no new
   * connection: a server whose host vanished without a reset (what the peer sees is
   * silence, not an error).
   */
  freeze(): void {
    this.frozen = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Passes bytes again on the connections frozen with `freeze` (ones taken while frozen stay unanswered). */
  thaw(): void {
    this.frozen = false;
    for (const { client, upstream } of this.pairs) client.pipe(upstream).pipe(client);
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restore(): Promise<void> {
    await this.start(this.port);
  }
}
