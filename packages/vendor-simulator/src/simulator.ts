import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_BATCH, type VendorBatchRequest, type VendorRequest, type VendorResponse } from "./contract";

export type SimulatorSettings = {
  /** Added before every answer. */
  latencyMs: number;
  /** Share of requests answered 503 (0-1). */
  failureRate: number;
  /** Every lookup answers 503 (a total outage). */
  outage: boolean;
  /** Hold the request without answering (to exercise client timeouts). */
  hang: boolean;
};

export type Simulator = {
  url: string;
  server: Server;
  settings: SimulatorSettings;
  /** Lookups received, by outcome: tests assert what actually reached the vendor. */
  stats: { requests: number; answered: number; failed: number };
  close(): Promise<void>;
};

function answer(req: VendorRequest): VendorResponse {
  const h = createHash("sha256").update(`${req.service}|${req.number}`).digest();
  const u = h.readUInt32BE(0) / 0x1_0000_0000;
  if (req.service === "hlr") {
    const status = u < 0.8 ? "reachable" : u < 0.95 ? "unreachable" : "unknown";
    return {
      result: status === "reachable" ? "registered" : status === "unreachable" ? "not_registered" : "unknown",
      hlr: { status, ported: (h[4] ?? 0) < 38, roaming: (h[5] ?? 0) < 13, network: "Simulated Network", mcc_mnc: "00101", country: null },
    };
  }
  const result = u < 0.6 ? "registered" : u < 0.95 ? "not_registered" : "unknown";
  return req.service === "whatsapp" ? { result, business: result === "registered" && (h[4] ?? 0) < 26 } : { result };
}

function readJson(req: IncomingMessage, limit = 64 * 1024): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) req.destroy(new Error("too large"));
      else chunks.push(c);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (err) {
        reject(err);
      }
    });
    req.on("error", reject);
  });
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

/**
 * A stand-in vendor over a real socket, for development, tests and benchmarks:
 * deterministic answers, with configurable latency, failure rate, outage and hang.
 * `POST /_control` changes the settings of a running simulator; `GET /healthz`
 * answers 200 (container healthchecks).
 */
export async function startSimulator(options: Partial<SimulatorSettings> & { apiKey?: string; port?: number; host?: string } = {}): Promise<Simulator> {
  const settings: SimulatorSettings = { latencyMs: 0, failureRate: 0, outage: false, hang: false, ...options };
  const apiKey = Buffer.from(options.apiKey ?? "sim-key");
  const stats = { requests: 0, answered: 0, failed: 0 };
  const server = createServer(async (req, res) => {
    try {
      if (req.method === "POST" && req.url === "/_control") {
        Object.assign(settings, (await readJson(req)) as Partial<SimulatorSettings>);
        send(res, 200, settings);
        return;
      }
      // Liveness for container healthchecks; not part of the vendor contract.
      if (req.method === "GET" && req.url === "/healthz") {
        send(res, 200, { status: "ok" });
        return;
      }
      const batch = req.url === "/v1/lookups/batch";
      if (req.method !== "POST" || (req.url !== "/v1/lookups" && !batch)) {
        send(res, 404, { error: "not_found" });
        return;
      }
      stats.requests += 1;
      const given = Buffer.from((req.headers.authorization ?? "").replace(/^Bearer /, ""));
      if (given.length !== apiKey.length || !timingSafeEqual(given, apiKey)) {
        send(res, 401, { error: "unauthorized" });
        return;
      }
      const body = (await readJson(req, 256 * 1024)) as Partial<VendorRequest & VendorBatchRequest>;
      const numbers = batch ? body?.numbers : [body?.number];
      const valid =
        body && ["whatsapp", "signal", "hlr"].includes(String(body.service)) && Array.isArray(numbers) && numbers.length >= 1 && numbers.length <= MAX_BATCH &&
        numbers.every((n) => typeof n === "string" && /^\+\d{6,15}$/.test(n));
      if (!valid) {
        send(res, 400, { error: "bad_request" });
        return;
      }
      if (settings.hang) return; // never answers; the client's timeout must fire
      if (settings.latencyMs > 0) await new Promise((r) => setTimeout(r, settings.latencyMs));
      if (settings.outage || Math.random() < settings.failureRate) {
        stats.failed += 1;
        send(res, 503, { error: "unavailable" });
        return;
      }
      stats.answered += (numbers as string[]).length;
      const service = body.service as VendorRequest["service"];
      if (batch) send(res, 200, { results: (numbers as string[]).map((number) => ({ number, ...answer({ service, number }) })) });
      else send(res, 200, answer({ service, number: (numbers as string[])[0] as string }));
    } catch {
      if (!res.headersSent) send(res, 400, { error: "bad_request" });
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    settings,
    stats,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
