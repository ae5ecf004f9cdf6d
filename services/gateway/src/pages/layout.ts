import { GUIDES } from "./guide-table";

/**
 * What every documentation page shares: the navigation bar (the API reference's too,
 * filled into reference.html's `{{docs-nav}}`), the stylesheet, and the frame of a page
 * built on the server (the error codes, the guides and their index).
 */

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The bar's entries: href → label. A guide's page marks "Guides" as current, test mode its own. */
const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/docs", "API reference"],
  ["/docs/guides", "Guides"],
  ["/docs/test-mode", "Test mode"],
  ["/docs/errors", "Error codes"],
  ["/get-test-key", "Get a test key"],
  ["/v1/openapi.json", "openapi.json"],
];

export function docsNav(current?: string): string {
  const links = NAV.map(([href, label]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ""}>${escapeHtml(label)}</a>`).join("");
  return `<nav class="docs-nav" aria-label="Documentation">${links}</nav>`;
}

/** Every guide, for the side of a guide's page; the current one marked. */
export function guideList(currentSlug?: string): string {
  const items = GUIDES.map((g) => `<li><a href="/docs/${g.slug}"${g.slug === currentSlug ? ' aria-current="page"' : ""}>${escapeHtml(g.title)}</a></li>`).join("");
  return `<aside class="guide-list" aria-label="Guides"><a class="guide-list-title" href="/docs/guides">Guides</a><ul>${items}</ul><a class="guide-list-title" href="/docs">API reference</a></aside>`;
}

/** A page built on the server: no script, our stylesheet only. */
export function docsPage(p: { title: string; nav: string; main: string; bodyClass?: string }): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(p.title)} · Phone and e-mail validation</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body${p.bodyClass ? ` class="${p.bodyClass}"` : ""}>${docsNav(p.nav)}
${p.main}</body></html>`;
}
