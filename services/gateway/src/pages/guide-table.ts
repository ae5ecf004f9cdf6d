/**
 * The guides the gateway serves under /docs, in the order the index and every guide's
 * sidebar list them. A guide with a `source` is a Markdown file of the repository
 * (copied into the gateway's dist/guides by scripts/copy-guides.mjs at build time and
 * rendered once when the gateway starts); one without is a page the gateway builds
 * itself. Adding a guide is one entry here. Documents not listed (operations,
 * scaling, security, …) are for operators and stay in the repository.
 */
export type Guide = {
  /** Its URL is /docs/<slug>. */
  slug: string;
  /** Short title: the index, the sidebar, the page's <title>. */
  title: string;
  /** One line on the index. */
  summary: string;
  /** The Markdown file, from the repository's root; absent for a page built in code. */
  source?: string;
};

export const GUIDES: readonly Guide[] = [
  { slug: "test-mode", source: "docs/test-mode.md", title: "Test mode", summary: "Test keys, the public sandbox key, and the numbers and addresses with documented answers." },
  { slug: "errors", title: "Error codes", summary: "Every error code with its HTTP status, whether to retry, and what to do." },
  { slug: "idempotency", source: "docs/idempotency.md", title: "Idempotency and retries", summary: "Idempotency-Key, replays, 409s, which errors to retry, Retry-After and backoff." },
  { slug: "webhooks", source: "docs/webhooks.md", title: "Webhooks", summary: "Endpoints, verification, signatures, delivery and retries of events." },
  { slug: "bulk-and-csv", source: "docs/csv-upload.md", title: "Bulk jobs and CSV", summary: "Jobs of up to 50,000 identifiers: JSON or a CSV upload, estimates, results and downloads." },
  { slug: "going-live", source: "docs/going-live.md", title: "Going live", summary: "From a test key to live answers: a live key, what answers cost, and what the operator sets up." },
  { slug: "sdk", source: "docs/sdk.md", title: "TypeScript SDK", summary: "@svc/sdk: install, first call, errors and retries, pagination." },
  { slug: "cli", source: "docs/cli.md", title: "Command line (svc)", summary: "The svc CLI: keys, lookups, jobs and downloads from a shell." },
  { slug: "mcp", source: "docs/mcp.md", title: "MCP server", summary: "Lookups and jobs from an AI agent, with cost confirmation." },
];

/**
 * Link targets in the repository that the gateway serves elsewhere, by repository path
 * (with a fragment where only that section has a served equivalent).
 */
export const SERVED_ELSEWHERE: Readonly<Record<string, string>> = {
  "docs/openapi.json": "/v1/openapi.json",
  "docs/api-decisions.md#errors": "/docs/errors",
};

/** Where the guides' Markdown lives inside the built gateway (services/gateway/dist/guides/<basename>). */
export const guideFileName = (source: string): string => source.split("/").pop() ?? source;
