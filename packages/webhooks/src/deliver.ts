import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import type { Duplex } from "node:stream";
import { checkWebhookUrl, WebhookUrlError, type Resolve } from "./url-check";
import type { AddressPolicy } from "@svc/domain";

/** Opens a TCP connection to an address that was checked. Tests inject one that maps a "public" address to a local receiver. */
export type Connector = (target: { address: string; port: number }) => Duplex;

export const directConnector: Connector = ({ address, port }) => net.connect({ host: address, port });

/** Short, fixed descriptions of a failed attempt: never the URL, an address or the receiver's text. */
export type DeliveryError =
  | "url_refused"
  | "dns_error"
  | "connection_refused"
  | "connection_error"
  | "tls_error"
  | "timeout"
  | "redirect"
  | "http_error";

export type DeliveryOutcome = {
  ok: boolean;
  /** HTTP status, when a response arrived. */
  statusCode: number | null;
  durationMs: number;
  error: DeliveryError | null;
};

export type TransportOptions = {
  resolve: Resolve;
  policy?: AddressPolicy;
  connect?: Connector;
  /** Extra trusted CA certificates (PEM), added to Node's roots: development and tests only. */
  extraCa?: string[];
  /** The whole attempt, connection to status line: anything slower is a failure. */
  timeoutMs?: number;
  /** At most this much of a response body is read; the rest is cut off. */
  maxResponseBytes?: number;
  /** Idle keep-alive connections kept per endpoint address (at least the dispatcher's concurrency). */
  maxFreeSockets?: number;
};

type PinnedOptions = tls.ConnectionOptions & { pinnedAddress: string; port: number; host: string };

/**
 * A keep-alive agent whose connections go to the address that was checked, not to
 * whatever the host name resolves to when the socket opens: no DNS-rebinding
 * window between the check and the connection. Pooled connections are keyed by
 * that address too, so a host that now resolves elsewhere gets a new connection.
 */
class PinnedAgent extends https.Agent {
  constructor(
    private readonly connector: Connector,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override getName(options?: https.RequestOptions): string {
    return `${super.getName(options)}:${(options as PinnedOptions | undefined)?.pinnedAddress ?? ""}`;
  }

  // Node calls this to open each pooled connection; `options` carry the request's fields.
  override createConnection(options: https.RequestOptions): Duplex {
    const pinned = options as PinnedOptions;
    const socket = this.connector({ address: pinned.pinnedAddress, port: pinned.port });
    return tls.connect({ ...pinned, socket });
  }
}

export type DeliveryRequest = { url: string; headers: Record<string, string>; body: string };

/**
 * HTTPS POSTs to webhook endpoints: checks the URL again at every attempt (the
 * host may have started resolving to a private address since it was saved),
 * connects only to a checked address, never follows redirects, gives the attempt
 * a hard deadline and reads at most `maxResponseBytes` of the answer.
 */
export class WebhookTransport {
  private readonly agent: PinnedAgent;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  /** Built once: a `ca` list on each request would be copied into every pool key and every new context. */
  private readonly secureContext: tls.SecureContext | undefined;

  constructor(private readonly options: TransportOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    this.secureContext = options.extraCa?.length ? tls.createSecureContext({ ca: [...tls.rootCertificates, ...options.extraCa] }) : undefined;
    this.agent = new PinnedAgent(options.connect ?? directConnector, {
      keepAlive: true,
      maxFreeSockets: options.maxFreeSockets ?? 256,
      // Idle connections are dropped after a while; receivers close theirs sooner anyway.
      timeout: 60_000,
      scheduling: "lifo",
    });
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let checked;
    try {
      checked = await checkWebhookUrl(request.url, this.options.resolve, this.options.policy);
    } catch (err) {
      const error: DeliveryError = err instanceof WebhookUrlError && err.reason === "unresolvable" ? "dns_error" : "url_refused";
      return { ok: false, statusCode: null, durationMs: elapsed(), error };
    }
    const { url, hostname, addresses } = checked;
    const remaining = this.timeoutMs - elapsed();
    if (remaining <= 0) return { ok: false, statusCode: null, durationMs: elapsed(), error: "timeout" };

    return new Promise<DeliveryOutcome>((resolve) => {
      let settled = false;
      const finish = (statusCode: number | null, error: DeliveryError | null) => {
        if (settled) return;
        settled = true;
        resolve({ ok: error === null, statusCode, durationMs: elapsed(), error });
      };
      const req = https.request({
        agent: this.agent,
        method: "POST",
        host: hostname,
        port: Number(url.port || 443),
        path: `${url.pathname}${url.search}`,
        // SNI carries host names only; certificate checks still use `host`.
        servername: net.isIP(hostname) ? "" : hostname,
        secureContext: this.secureContext,
        pinnedAddress: addresses[0],
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
      } as https.RequestOptions);
      const deadline = setTimeout(() => {
        finish(null, "timeout");
        req.destroy();
      }, remaining);
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        // A 2xx status line within the deadline is success; the body is only drained.
        finish(status, status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? "redirect" : "http_error");
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > this.maxResponseBytes) res.destroy();
        });
        res.on("close", () => clearTimeout(deadline));
        res.on("error", () => undefined);
      });
      req.on("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        finish(null, classify(err));
      });
      req.end(request.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function classify(err: NodeJS.ErrnoException): DeliveryError {
  if (err.code === "ECONNREFUSED") return "connection_refused";
  if (err.code === "ETIMEDOUT") return "timeout";
  if (err.code?.startsWith("ERR_TLS") || err.code?.startsWith("ERR_SSL") || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME|ALTNAME/.test(err.code ?? "")) return "tls_error";
  return "connection_error";
}
