import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { RequestHandler, Response } from "express";
import { ERROR_CODES, ERROR_GUIDANCE } from "@svc/contract";
import type { Deps } from "../deps";
import { guideHandlers, loadGuides, type GuideHandlers } from "./guides";
import { docsNav, docsPage, escapeHtml } from "./layout";

export { escapeHtml } from "./layout";

const ASSETS = path.join(__dirname, "..", "..", "assets");
/** The renderer's bundle, copied there by the gateway's build (scripts/copy-docs-renderer.mjs). */
const VENDOR = path.join(__dirname, "..", "..", "dist", "vendor");

/** Every page names its own sources; none names a host but ours. */
const BASE_CSP = ["default-src 'none'", "connect-src 'self'", "img-src 'self' data:", "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'"];
const csp = (...extra: string[]) => [...BASE_CSP, ...extra].join("; ");

/** The test-key page: its script, its stylesheet, and a Web Worker from our origin (no blob: workers). */
export const TEST_KEY_CSP = csp("script-src 'self'", "worker-src 'self'", "style-src 'self'");
/** The worker's own policy (a worker is governed by the policy sent with its script): it may only import our solver. */
export const WORKER_CSP = "default-src 'none'; script-src 'self'";
/** The errors page, the guides and their index: no script at all. */
export const ERRORS_CSP = csp("script-src 'none'", "style-src 'self'");
export const GUIDE_CSP = ERRORS_CSP;
/**
 * The API reference: scripts, the document and everything else from 'self'. Styles need
 * 'unsafe-inline': the renderer (Vue) injects `<style>` elements and `style` attributes at
 * run time (a nonce would cover only the first of its style elements).
 */
export const REFERENCE_CSP = csp("script-src 'self'", "style-src 'self' 'unsafe-inline'", "font-src 'self'", "worker-src 'self'");

/**
 * Guidance is plain text in which `backticks` mark code: everything is escaped, and each
 * pair of backticks becomes `<code>`. An unpaired backtick stays as it is.
 */
export function renderInlineCode(text: string): string {
  const parts = text.split("`");
  return parts
    .map((part, i) => {
      if (i % 2 === 0) return escapeHtml(part);
      return i < parts.length - 1 ? `<code>${escapeHtml(part)}</code>` : `\`${escapeHtml(part)}`;
    })
    .join("");
}

const sendScript = (source: string | Buffer, headers: Record<string, string> = {}): RequestHandler => (_req, res) => {
  res.setHeader("X-Content-Type-Options", "nosniff");
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.type("application/javascript").send(source);
};

function sendPage(res: Response, policy: string, html: string): void {
  res.setHeader("Content-Security-Policy", policy);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.type("html").send(html);
}

/**
 * The get-a-test-key page: a form whose script solves the proof of work in a Web Worker
 * (pow-worker.js, hashing with crypto.subtle) and shows the key once, with a copy button.
 */
export function testKeyPage(deps: Pick<Deps, "config">): { page: RequestHandler; script: RequestHandler; solver: RequestHandler; worker: RequestHandler; stylesheet: RequestHandler } {
  const read = (name: string) => readFileSync(path.join(ASSETS, name), "utf8");
  const html = read("get-test-key.html").replace(/\{\{difficulty\}\}/g, String(deps.config.TEST_KEY_POW_DIFFICULTY));
  const css = read("get-test-key.css");
  return {
    page: (_req, res) => sendPage(res, TEST_KEY_CSP, html),
    script: sendScript(read("get-test-key.js")),
    solver: sendScript(read("pow-solver.js")),
    worker: sendScript(read("pow-worker.js"), { "Content-Security-Policy": WORKER_CSP }),
    stylesheet: (_req, res) => {
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.type("text/css").send(css);
    },
  };
}

/** Every error code with its status, retryability and what to do: the target of `doc_url`. */
export function errorsPage(): RequestHandler {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, def]) =>
        `<tr id="${code}"><td><a class="anchor" href="#${code}"><code>${code}</code></a></td><td>${def.status}</td><td>${def.retryable ? "yes" : "no"}</td><td>${renderInlineCode(ERROR_GUIDANCE[code as keyof typeof ERROR_CODES])}</td></tr>`,
    )
    .join("\n");
  const main = `<main class="errors"><h1>Error codes</h1>
<p>Every non-2xx response carries <code>{"error": {code, message, status, retryable, param, suggestion?, doc_url, request_id}}</code>. Branch on <code>code</code>; retry only when <code>retryable</code> is true, honour <code>Retry-After</code>, and resend POSTs with the same <code>Idempotency-Key</code> (<a href="/docs/idempotency">Idempotency and retries</a> says how).</p>
<p>New codes may be added within v1: for a code you do not know, fall back to the HTTP status. The <a href="/docs">API reference</a> lists which codes each operation answers; the <a href="/docs/guides">guides</a> cover test mode, webhooks, bulk jobs and the clients.</p>
<table><thead><tr><th>code</th><th>HTTP</th><th>retryable</th><th>meaning and what to do</th></tr></thead><tbody>
${rows}
</tbody></table></main>`;
  const html = docsPage({ title: "Error codes", nav: "/docs/errors", main });
  return (_req, res) => sendPage(res, ERRORS_CSP, html);
}

/**
 * `/docs`: the API reference rendered in the browser from GET /v1/openapi.json by Scalar's
 * standalone bundle, which the gateway serves itself (gzip when the client takes it).
 */
let vendorBundle: { plain: Buffer; gzip: Buffer } | null | undefined;

/** Read once per process (4 MB, 1.2 MB gzipped); null when the build did not copy it. */
function loadVendorBundle(): { plain: Buffer; gzip: Buffer } | null {
  if (vendorBundle !== undefined) return vendorBundle;
  const file = path.join(VENDOR, "scalar-api-reference.js");
  vendorBundle = existsSync(file) && existsSync(`${file}.gz`) ? { plain: readFileSync(file), gzip: readFileSync(`${file}.gz`) } : null;
  return vendorBundle;
}

export function referencePage(deps: Pick<Deps, "logger">): { page: RequestHandler; asset: RequestHandler } {
  const template = readFileSync(path.join(ASSETS, "docs", "reference.html"), "utf8").replace("{{docs-nav}}", docsNav("/docs"));
  const bundle = loadVendorBundle();
  if (!bundle) deps.logger.error({ dir: VENDOR }, "the API reference bundle is missing (run `npm run build`); /docs will answer 503");
  const assets: Record<string, { type: string; body: string }> = {
    "reference.js": { type: "application/javascript", body: readFileSync(path.join(ASSETS, "docs", "reference.js"), "utf8") },
    "docs.css": { type: "text/css", body: readFileSync(path.join(ASSETS, "docs", "docs.css"), "utf8") },
  };
  return {
    page: (_req, res) => {
      if (!bundle) {
        res.status(503).type("text/plain").send("The API reference is not built on this server. The contract is at /v1/openapi.json.");
        return;
      }
      sendPage(res, REFERENCE_CSP, template);
    },
    asset: (req, res, next) => {
      const name = String(req.params.name);
      res.setHeader("X-Content-Type-Options", "nosniff");
      if (name === "scalar-api-reference.js" && bundle) {
        res.setHeader("Cache-Control", "public, max-age=86400");
        res.setHeader("Vary", "Accept-Encoding");
        res.type("application/javascript");
        if (req.acceptsEncodings("gzip") === "gzip") {
          res.setHeader("Content-Encoding", "gzip");
          res.send(bundle.gzip);
        } else res.send(bundle.plain);
        return;
      }
      const asset = assets[name];
      if (!asset) return next();
      res.setHeader("Cache-Control", "public, max-age=300");
      res.type(asset.type).send(asset.body);
    },
  };
}

/** The guides under /docs (rendered once, here), their index at /docs/guides. */
export function guidePages(deps: Pick<Deps, "logger">): GuideHandlers {
  return guideHandlers((res, html) => sendPage(res, GUIDE_CSP, html), loadGuides(deps));
}
