import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { headingSlugger } from "../../services/gateway/src/pages/render-guide";

const ROOT = path.resolve(__dirname, "..", "..");

/** Every Markdown file the repository holds (git's list: nothing built or installed). */
const MARKDOWN = execFileSync("git", ["ls-files", "*.md"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);

/** The anchors of a file's headings, as GitHub (and the gateway's guide pages) name them. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  const slug = headingSlugger();
  // The heading's text as rendered: inline code and links reduced to their text.
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"))));
}

/** The relative links of a Markdown file (code blocks and inline code left out). */
function linksOf(file: string): string[] {
  const text = readFileSync(file, "utf8")
    .replace(/```[\s\S]*?```/g, "")
    .replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("links between the repository's documents", () => {
  it.each(MARKDOWN)("%s: every relative link and anchor resolves", (relative) => {
    const file = path.join(ROOT, relative);
    const broken: string[] = [];
    for (const link of linksOf(file)) {
      const [target, anchor] = link.split("#") as [string, string | undefined];
      const resolved = target ? path.resolve(path.dirname(file), decodeURIComponent(target)) : file;
      if (!existsSync(resolved)) {
        broken.push(`${link} (no such file)`);
        continue;
      }
      if (anchor && statSync(resolved).isFile() && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(`${link} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });
});
