import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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

function reply(res: ServerResponse, status: number, contentType: string, body: string, head: boolean): void {
  res.writeHead(status, { "Content-Type": contentType, "Cache-Control": "no-store", "Content-Length": Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}

/**
 * The operations port, apart from the public API (never behind the public
 * Service): GET /metrics (Prometheus text), /livez (200 while the event loop
 * turns: answering at all is the proof), /readyz (200 when every readiness check
 * passes and the service is not draining, else 503 with which check failed).
 * Nothing else; no request body is ever read.
 */
export async function startOpsServer(options: { port: number; host: string; source: OpsSource; draining: () => boolean }): Promise<OpsServer> {
  const { source, draining } = options;
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
