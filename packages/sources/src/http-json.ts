import http from "node:http";
import https from "node:https";
import { SourceError } from "./types";

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * POSTs JSON and reads a JSON answer over a keep-alive agent (much lighter than
 * fetch per call). Redirects are not followed. 429/5xx, timeouts and connection
 * errors are retryable SourceErrors; other non-200 answers are not.
 */
export function postJson(url: URL, body: unknown, headers: Record<string, string>, agent: http.Agent, signal: AbortSignal): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new SourceError("timeout", true));
      return;
    }
    const req = client.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(payload.length), ...headers } },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          res.resume();
          reject(status === 429 || status >= 500 ? new SourceError("unavailable", true, `status ${status}`) : new SourceError("rejected", false, `status ${status}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new SourceError("bad_response", true, "response too large"));
          else chunks.push(c);
        });
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch {
            reject(new SourceError("bad_response", true));
          }
        });
        res.on("error", (err) => reject(err instanceof SourceError ? err : new SourceError("unavailable", true)));
      },
    );
    const onAbort = () => req.destroy(new SourceError("timeout", true));
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal.removeEventListener("abort", onAbort));
    req.on("error", (err) => reject(err instanceof SourceError ? err : new SourceError(signal.aborted ? "timeout" : "unavailable", true, err.name)));
    req.end(payload);
  });
}
