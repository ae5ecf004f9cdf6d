import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { RequestHandler } from "express";
import type { Deps } from "../deps";
import { GUIDES, guideFileName, type Guide } from "./guide-table";
import { docsPage, escapeHtml, guideList } from "./layout";
import { renderGuide } from "./render-guide";

/** The guides' Markdown, copied from the repository's docs/ by the gateway's build (scripts/copy-guides.mjs). */
export const GUIDE_DIR = path.join(__dirname, "..", "..", "dist", "guides");

/** Where a guide's page marks itself in the bar: test mode has its own entry, the others are under "Guides". */
const navOf = (slug: string) => (slug === "test-mode" ? "/docs/test-mode" : "/docs/guides");

export type GuidePage = { guide: Guide; html: string };

/**
 * Every guide with a Markdown source, rendered once (at start-up, not per request).
 * A guide whose file the build did not copy is logged and left out: its URL is then a
 * 503 that says so rather than a page of nothing.
 */
export function loadGuides(deps: Pick<Deps, "logger">, dir = GUIDE_DIR): Map<string, GuidePage> {
  const pages = new Map<string, GuidePage>();
  for (const guide of GUIDES) {
    if (!guide.source) continue;
    const file = path.join(dir, guideFileName(guide.source));
    if (!existsSync(file)) {
      deps.logger.error({ file }, "a guide's Markdown is missing (run `npm run build`); its page will answer 503");
      continue;
    }
    const rendered = renderGuide(readFileSync(file, "utf8"), guide.source);
    const main = `<div class="guide-layout">${guideList(guide.slug)}<main class="guide"><article>
${rendered.html}</article>
<p class="guide-source">From <code>${escapeHtml(guide.source)}</code> in the repository.</p></main></div>`;
    pages.set(guide.slug, { guide, html: docsPage({ title: guide.title, nav: navOf(guide.slug), main }) });
  }
  return pages;
}

/** /docs/guides: every guide with its one line. */
export function guideIndexHtml(): string {
  const items = GUIDES.map((g) => `<li><a href="/docs/${g.slug}">${escapeHtml(g.title)}</a><p>${escapeHtml(g.summary)}</p></li>`).join("\n");
  const main = `<div class="guide-layout">${guideList()}<main class="guide"><article><h1>Guides</h1>
<p>How the API behaves around its operations. Each operation, with its parameters, answers and errors, is in the <a href="/docs">API reference</a>; the test values are in <a href="/docs/test-mode">Test mode</a>, and a personal test key is one form away at <a href="/get-test-key">/get-test-key</a>.</p>
<ul class="guide-index">
${items}
</ul></article></main></div>`;
  return docsPage({ title: "Guides", nav: "/docs/guides", main });
}

export type GuideHandlers = { index: RequestHandler; page: (slug: string) => RequestHandler };

export function guideHandlers(send: (res: Parameters<RequestHandler>[1], html: string) => void, pages: Map<string, GuidePage>): GuideHandlers {
  const index = guideIndexHtml();
  return {
    index: (_req, res) => send(res, index),
    page: (slug) => (_req, res) => {
      const found = pages.get(slug);
      if (!found) {
        res.status(503).type("text/plain").send("This guide is not built on this server (its Markdown is missing). The guides are in the repository's docs/ folder.");
        return;
      }
      send(res, found.html);
    },
  };
}
