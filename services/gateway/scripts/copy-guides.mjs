#!/usr/bin/env node
// Part of the gateway's build, after tsc: copies the Markdown of every guide the gateway
// serves (GUIDES in src/pages/guide-table.ts, read from its build) from the repository's
// docs/ into dist/guides, where the gateway renders them once at start-up. The image
// carries dist/ and not docs/, so this is how the guides get into it. A guide listed
// whose file is missing fails the build.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const gateway = path.join(here, "..");
const root = path.join(gateway, "..", "..");
const out = path.join(gateway, "dist", "guides");
const { GUIDES, guideFileName } = require(path.join(gateway, "dist", "pages", "guide-table.js"));

const missing = GUIDES.filter((g) => g.source && !existsSync(path.join(root, g.source))).map((g) => g.source);
if (missing.length > 0) {
  console.error(`copy-guides: listed in services/gateway/src/pages/guide-table.ts but not in the repository: ${missing.join(", ")}`);
  process.exit(1);
}
// Start empty, so a guide taken off the list is not served from an old build.
if (existsSync(out)) for (const f of readdirSync(out)) rmSync(path.join(out, f));
mkdirSync(out, { recursive: true });
const sources = GUIDES.filter((g) => g.source);
for (const g of sources) copyFileSync(path.join(root, g.source), path.join(out, guideFileName(g.source)));
console.log(`copied ${sources.length} guides to dist/guides`);
