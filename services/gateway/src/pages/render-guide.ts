import path from "node:path";
import MarkdownIt from "markdown-it";
import { escapeHtml } from "./layout";
import { GUIDES, SERVED_ELSEWHERE, type Guide } from "./guide-table";

/**
 * Turns a guide's Markdown into HTML for /docs/<slug>: markdown-it with raw HTML off
 * (a `<tag>` in a guide is shown as text, never run), an id and an anchor on every
 * heading (GitHub's ids, so `file.md#section` links written for GitHub still land),
 * and every link rewritten to what the gateway serves.
 */

/** Where a link in a guide leads once served. */
export type LinkTarget =
  /** A URL the page can link: another guide, a section, the API, or another site. */
  | { kind: "url"; href: string }
  /** A file of the repository the gateway does not serve: shown as its path, not linked. */
  | { kind: "repo"; path: string };

export type RenderedGuide = {
  html: string;
  /** The text of the first heading. */
  title: string;
  /** Every heading's id, in order. */
  ids: string[];
  links: LinkTarget[];
};

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A link's target, `href` as written in the Markdown file `source` (a repository path
 * such as docs/cli.md): relative links to a served guide become /docs/<slug>, to a file
 * served elsewhere its URL; any other file of the repository is a `repo` target.
 */
export function resolveGuideLink(href: string, source: string, guides: readonly Guide[] = GUIDES): LinkTarget {
  if (SCHEME.test(href) || href.startsWith("#") || href.startsWith("/")) return { kind: "url", href };
  const hash = href.indexOf("#");
  const file = hash === -1 ? href : href.slice(0, hash);
  const fragment = hash === -1 ? "" : href.slice(hash);
  const repoPath = path.posix.normalize(path.posix.join(path.posix.dirname(source), file)).replace(/\/$/, "");
  const elsewhere = SERVED_ELSEWHERE[`${repoPath}${fragment}`] ?? (SERVED_ELSEWHERE[repoPath] !== undefined ? `${SERVED_ELSEWHERE[repoPath]}${fragment}` : undefined);
  if (elsewhere !== undefined) return { kind: "url", href: elsewhere };
  const guide = guides.find((g) => g.source === repoPath);
  if (guide) return { kind: "url", href: `/docs/${guide.slug}${fragment}` };
  return { kind: "repo", path: repoPath };
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function headingSlugger(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base);
    seen.set(base, (n ?? -1) + 1);
    return n === undefined ? base : `${base}-${n + 1}`;
  };
}

type Env = { source: string; guides: readonly Guide[]; ids: string[]; links: LinkTarget[]; title?: string };
type Renderer = ReturnType<typeof MarkdownIt>;
type Token = MarkdownIt.Token;

const inlineText = (tokens: Token[] | null): string =>
  (tokens ?? [])
    .filter((t) => t.type === "text" || t.type === "code_inline")
    .map((t) => t.content)
    .join("");

function createRenderer(): Renderer {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

  md.core.ruler.push("guide_headings_and_links", (state) => {
    const env = state.env as Env;
    const slug = headingSlugger();
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      if (token.type === "heading_open") {
        const text = inlineText(tokens[i + 1]?.children ?? null);
        const id = slug(text);
        token.attrSet("id", id);
        const close = tokens[i + 2];
        if (close?.type === "heading_close") close.meta = { id };
        env.ids.push(id);
        env.title ??= text;
      }
      const children = token.type === "inline" ? (token.children ?? []) : [];
      for (let j = 0; j < children.length; j++) {
        const child = children[j]!;
        if (child.type !== "link_open") continue;
        const target = resolveGuideLink(String(child.attrGet("href") ?? ""), env.source, env.guides);
        env.links.push(target);
        if (target.kind === "url") {
          child.attrSet("href", target.href);
          if (/^https?:/i.test(target.href)) child.attrSet("rel", "noopener noreferrer");
          continue;
        }
        // Not served here: the link's text stays, followed by the file's repository path.
        const closeAt = children.findIndex((c, k) => k > j && c.type === "link_close");
        const close = children[closeAt];
        if (!close) continue;
        const text = inlineText(children.slice(j + 1, closeAt));
        child.type = "repo_link_open";
        close.type = "repo_link_close";
        close.meta = { path: target.path, showPath: !text.includes(target.path) };
      }
    }
  });

  md.renderer.rules.heading_close = (tokens, idx) => {
    const token = tokens[idx]!;
    const id = (token.meta as { id?: string } | null)?.id;
    const anchor = id === undefined ? "" : ` <a class="anchor" href="#${escapeHtml(id)}" aria-label="Link to this section">#</a>`;
    return `${anchor}</${token.tag}>\n`;
  };
  md.renderer.rules.repo_link_open = () => `<span class="repo-file">`;
  md.renderer.rules.repo_link_close = (tokens, idx) => {
    const { path: repoPath, showPath } = tokens[idx]!.meta as { path: string; showPath: boolean };
    const shown = showPath ? ` <span class="repo-path">(in the repository: <code>${escapeHtml(repoPath)}</code>)</span>` : "";
    return `</span>${shown}`;
  };
  return md;
}

let renderer: Renderer | undefined;

/** Whole-line HTML comments are notes for the file's editors (e.g. "generated, do not edit"). */
const EDITOR_NOTES = /^<!--[\s\S]*?-->[ \t]*\r?\n?/gm;

/** Renders `markdown`, the content of the repository file `source`. */
export function renderGuide(markdown: string, source: string, guides: readonly Guide[] = GUIDES): RenderedGuide {
  renderer ??= createRenderer();
  const env: Env = { source, guides, ids: [], links: [] };
  const html = renderer.render(markdown.replace(EDITOR_NOTES, ""), env);
  return { html, title: env.title ?? "", ids: env.ids, links: env.links };
}
