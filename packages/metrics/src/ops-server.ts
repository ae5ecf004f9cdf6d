import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve as resolvePath } from "node:path";
import { exposition } from "./registry";
import type { Readiness } from "./readiness";

/** Where /metrics and /readyz get their answers: this process, or a cluster primary's workers. */
export type OpsSource = {
  metrics(): Promise<{ contentType: string; body: string }>;
  readiness(): Promise<Readiness>;
};

export type OpsServer = {
  /** The port actually bound (METRICS_PORT, or the one the system chose for 0 in tests). */
  port: number;
  close(): Promise<void>;
};

/** This process's own registry and readiness checks. */
export function localSource(readiness: () => Promise<Readiness>): OpsSource {
  return { metrics: exposition, readiness };
}

/**
 * The header every answer of the operations port carries, naming the service that
 * gave it. A probe that reaches a port cannot otherwise tell whose it is: under host
 * networking (or a port mapped by mistake) another service's /readyz may answer,
 * and its 200 says nothing about this one (docker/healthcheck.cjs refuses it).
 */
export const SERVICE_HEADER = "Svc-Service";

/**
 * The service this process runs, from its entry point: the workspace package that
 * holds it (services/gateway/dist/main.js → @svc/gateway → "gateway"). Null when
 * the nearest package.json is not one of this repository's (@svc/…): a REPL, a
 * test runner.
 */
export function entryService(entry = require.main?.filename ?? process.argv[1]): string | null {
  if (!entry) return null;
  let dir = dirname(resolvePath(entry));
  for (let i = 0; i < 5; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown };
      if (typeof pkg.name === "string") return /^@svc\/([a-z0-9-]+)$/.exec(pkg.name)?.[1] ?? null;
    } catch {
      // not here: look one level up
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

function replyAs(res: ServerResponse, status: number, contentType: string, body: string, head: boolean, service: string | null): void {
  res.writeHead(status, {
    "Content-Type": contentType,
    "Cache-Control": "no-store",
    "Content-Length": Buffer.byteLength(body),
    ...(service ? { [SERVICE_HEADER]: service } : {}),
  });
  res.end(head ? undefined : body);
}

/**
 * The operations port, apart from the public API (never behind the public
 * Service): GET /metrics (Prometheus text), /livez (200 while the event loop
 * turns: answering at all is the proof), /readyz (200 when every readiness check
 * passes and the service is not draining, else 503 with which check failed).
 * Nothing else; no request body is ever read. Every answer names the service in
 * the Svc-Service header (`service`, or the package of the process's entry point).
 */
export async function startOpsServer(options: { port: number; host: string; source: OpsSource; draining: () => boolean; service?: string }): Promise<OpsServer> {
  const { source, draining } = options;
  const service = options.service ?? entryService();
  const reply = (res: ServerResponse, status: number, contentType: string, body: string, head: boolean) => replyAs(res, status, contentType, body, head, service);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const head = req.method === "HEAD";
    if (req.method !== "GET" && !head) return reply(res, 405, "text/plain; charset=utf-8", "method not allowed\n", false);
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/livez") return reply(res, 200, "text/plain; charset=utf-8", "ok\n", head);
    if (path === "/readyz") {
      if (draining()) return reply(res, 503, "application/json", JSON.stringify({ status: "draining" }) + "\n", head);
      const r = await source.readiness();
      // Draining may have begun while the checks ran.
      const ready = r.ready && !draining();
      return reply(res, ready ? 200 : 503, "application/json", JSON.stringify({ status: ready ? "ready" : draining() ? "draining" : "not_ready", checks: r.checks }) + "\n", head);
    }
    if (path === "/metrics") {
      const m = await source.metrics();
      return reply(res, 200, m.contentType, m.body, head);
    }
    return reply(res, 404, "text/plain; charset=utf-8", "not found\n", head);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "text/plain; charset=utf-8", "error\n", false);
      else res.destroy();
    });
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          err.code === "EADDRINUSE"
            ? `METRICS_PORT ${options.port} is already in use on ${options.host} (set METRICS_PORT to a free port, or 0 to turn the operations port off)`
            : `METRICS_PORT ${options.port} on METRICS_HOST ${options.host} cannot be listened on: ${err.code ?? err.message}`,
        ),
      );
    };
    server.once("error", onError);
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
