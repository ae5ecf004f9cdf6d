import { readFileSync } from "node:fs";
import path from "node:path";
import type { RequestHandler } from "express";
import { ERROR_CODES, ERROR_GUIDANCE } from "@svc/contract";
import type { Deps } from "../context";

const ASSETS = path.join(__dirname, "..", "..", "assets");
const CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The get-a-test-key page: a form whose script solves the proof-of-work in the browser. */
export function testKeyPage(deps: Deps): { page: RequestHandler; script: RequestHandler; solver: RequestHandler } {
  const html = readFileSync(path.join(ASSETS, "get-test-key.html"), "utf8").replace("{{difficulty}}", String(deps.config.TEST_KEY_POW_DIFFICULTY));
  const js = readFileSync(path.join(ASSETS, "get-test-key.js"), "utf8");
  const solverJs = readFileSync(path.join(ASSETS, "pow-solver.js"), "utf8");
  const sendScript = (source: string): RequestHandler => (_req, res) => {
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.type("application/javascript").send(source);
  };
  return {
    page: (_req, res) => {
      res.setHeader("Content-Security-Policy", CSP);
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.type("html").send(html);
    },
    script: sendScript(js),
    solver: sendScript(solverJs),
  };
}

/** Every error code with its status, retryability and what to do: the target of `doc_url`. */
export function errorsPage(): RequestHandler {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, def]) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${def.status}</td><td>${def.retryable ? "yes" : "no"}</td><td>${escapeHtml(ERROR_GUIDANCE[code as keyof typeof ERROR_CODES])}</td></tr>`,
    )
    .join("\n");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;vertical-align:top}tr:target{background:#fff6d5}</style></head>
<body><h1>Error codes</h1><p>Every non-2xx response carries <code>{"error": {code, message, status, retryable, param, suggestion?, doc_url, request_id}}</code>. Branch on <code>code</code>; retry only when <code>retryable</code> is true, honour <code>Retry-After</code>, and resend POSTs with the same <code>Idempotency-Key</code>.</p>
<table><thead><tr><th>code</th><th>HTTP</th><th>retryable</th><th>meaning and what to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
  return (_req, res) => {
    res.setHeader("Content-Security-Policy", CSP);
    res.type("html").send(html);
  };
}
