#!/usr/bin/env node
// Regenerates the docs that are derived from code (run after `npm run build`).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { ROOT } from "./lib.mjs";

const require = createRequire(import.meta.url);
const { renderTestModeMarkdown } = require(path.join(ROOT, "packages/domain/dist/index.js"));
const { buildOpenApi } = require(path.join(ROOT, "packages/contract/dist/index.js"));
writeFileSync(path.join(ROOT, "docs/test-mode.md"), renderTestModeMarkdown());
writeFileSync(path.join(ROOT, "docs/openapi.json"), `${JSON.stringify(buildOpenApi("https://api.example.com"), null, 2)}\n`);
console.log("wrote docs/test-mode.md and docs/openapi.json");
