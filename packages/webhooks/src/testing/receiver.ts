import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestCertificates } from "./test-ca";

export type ReceivedRequest = { path: string; headers: IncomingMessage["headers"]; body: string; receivedAt: number };

/** How the receiver answers one request; the default is 200 with a short body. */
export type Reply = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export const ok: Reply = (_req, res) => {
  res.writeHead(200, { "content-type": "text/plain" }).end("ok");
};

/**
 * A webhook receiver speaking real HTTPS on loopback: records every request
 * (headers and raw body, as a customer's verifier would see them) and answers
 * with `reply`, which tests swap to produce failures, redirects, slow answers or
 * oversized bodies.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  reply: Reply = ok;
  private server!: https.Server;
  private listeners: Array<(r: ReceivedRequest) => void> = [];

  constructor(private readonly certs: TestCertificates) {}

  async start(): Promise<this> {
    this.server = https.createServer({ key: this.certs.key, cert: this.certs.cert, keepAliveTimeout: 30_000 }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const received = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), receivedAt: Date.now() };
        this.requests.push(received);
        for (const l of this.listeners) l(received);
        Promise.resolve(this.reply(received, res)).catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = "/hooks"): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves with the `count`-th request matching `filter` (already received or still to come). */
  waitFor(filter: (r: ReceivedRequest) => boolean = () => true, count = 1, timeoutMs = 15_000): Promise<ReceivedRequest> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const matches = this.requests.filter(filter);
        if (matches.length >= count) {
          clearTimeout(timer);
          this.listeners = this.listeners.filter((l) => l !== check);
          resolve(matches[count - 1] as ReceivedRequest);
        }
      };
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error(`receiver: expected ${count} matching request(s) within ${timeoutMs} ms, got ${this.requests.filter(filter).length}`));
      }, timeoutMs);
      this.listeners.push(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
