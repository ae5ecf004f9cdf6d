import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/**
 * Debian's Chromium (`apt-get install chromium`), never a browser downloaded by a test
 * tool. `npm test` installs it when it is missing (scripts/lib.mjs); these tests fail
 * rather than skip when it is not there.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What this machine needs: root (no sandbox), no GPU, and no calls home on a closed network. */
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** Headless Chromium; playwright gives each launch a fresh, empty --user-data-dir. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}. Run \`npm test\` (it installs Debian's chromium) or \`apt-get install -y chromium\`, or point CHROMIUM_PATH at one.`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

export type PageWatch = {
  /** Requests that left the gateway's origin (should be none: no CDN, no telemetry, no fonts). */
  foreignRequests: string[];
  /** Console errors, CSP violations among them, and uncaught exceptions. */
  errors: string[];
};

/** A page that records what a tight CSP and a self-hosted page must never do. */
export async function watchedPage(context: BrowserContext, origin: string): Promise<{ page: Page; watch: PageWatch }> {
  const page = await context.newPage();
  const watch: PageWatch = { foreignRequests: [], errors: [] };
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith("data:") && !url.startsWith("blob:")) watch.foreignRequests.push(url);
  });
  page.on("console", (m) => {
    if (m.type() === "error") watch.errors.push(m.text());
  });
  page.on("pageerror", (e) => watch.errors.push(`uncaught: ${e.message}`));
  return { page, watch };
}
