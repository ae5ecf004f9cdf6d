import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Seen = { method: string; url: string; headers: IncomingMessage["headers"]; body: string; at: number };

/** What the server does with the n-th request (0-based). */
export type Step =
  | { status: number; json?: unknown; text?: string; headers?: Record<string, string> }
  | "reset" // destroy the connection without answering
  | "stall"; // accept and never answer

/**
 * A real HTTP server on loopback that answers from a script, for the retry policy:
 * the SDK talks to it through the platform's fetch, exactly as to the gateway.
 */
export class ScriptedServer {
  readonly requests: Seen[] = [];
  #server: Server;
  #script: (n: number, req: Seen) => Step = () => ({ status: 500 });
  #stalled = new Set<ServerResponse>();
  url = "";

  constructor() {
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const seen: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, at: Date.now() };
        const n = this.requests.length;
        this.requests.push(seen);
        const step = this.#script(n, seen);
        if (step === "reset") return void req.socket.destroy();
        if (step === "stall") return void this.#stalled.add(res);
        const headers: Record<string, string> = { "X-Request-Id": `req_scripted_${n + 1}`, ...step.headers };
        if (step.json !== undefined) headers["Content-Type"] = "application/json";
        res.writeHead(step.status, headers).end(step.json !== undefined ? JSON.stringify(step.json) : (step.text ?? ""));
      });
    });
  }

  script(fn: (n: number, req: Seen) => Step): this {
    this.#script = fn;
    this.requests.length = 0;
    return this;
  }

  /** Answers step by step from a list; the last step repeats. */
  steps(...steps: Step[]): this {
    return this.script((n) => steps[Math.min(n, steps.length - 1)] as Step);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.#stalled) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

export const apiError = (code: string, status: number, retryable: boolean, extra: Record<string, unknown> = {}) => ({
  error: { code, message: `The ${code} message.`, status, retryable, param: null, doc_url: `http://x/docs/errors#${code}`, request_id: "req_in_body", ...extra },
});

/** A body of the documented Lookup shape. */
export const lookupBody = (extra: Record<string, unknown> = {}) => ({
  id: "lkp_scripted",
  object: "lookup",
  status: "completed",
  livemode: false,
  checks: ["number.spam"],
  created_at: "2026-01-01T00:00:00.000Z",
  completed_at: "2026-01-01T00:00:00.000Z",
  webhook_endpoint_id: null,
  summary: { total: 1, registered: 0, not_registered: 1, unknown: 0 },
  results: [
    {
      row_no: 1,
      kind: "number",
      input: "+12025550100",
      e164: "+12025550100",
      country: "US",
      number_status: "valid",
      email: null,
      email_status: null,
      checks: [{ service: "number.spam", status: "ok", registered: false, attributes: { risk_level: "no_reports" }, cached: false, billed: false, checked_at: "2026-01-01T00:00:00.000Z" }],
    },
  ],
  ...extra,
});

export const accountBody = () => ({
  object: "account",
  id: "acct_1",
  name: "A",
  livemode: false,
  balance: { amount: "1.00", currency: "USD" },
  reserved: { amount: "0.00", currency: "USD" },
  available: { amount: "1.00", currency: "USD" },
  low_balance_threshold: null,
  retention_days: 30,
  today: { date: "2026-01-01", identifiers: 0, checks: 0, conclusive: 0, spend: { amount: "0.00", currency: "USD" } },
});

/** Records the waits the client asks for instead of sleeping (the clock is injected). */
export function recordingSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}
