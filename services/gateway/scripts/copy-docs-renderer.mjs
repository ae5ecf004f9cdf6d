#!/usr/bin/env node
// Part of the gateway's build: copies the API reference renderer's standalone bundle
// (@scalar/api-reference, a devDependency pinned in package.json) into dist/vendor,
// with a gzip copy, so the built gateway serves /docs without the package and its
// ~270 dependencies at run time (the image prunes devDependencies) and without a CDN.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "..", "dist", "vendor");

let entry;
try {
  entry = require.resolve("@scalar/api-reference"); // …/dist/index.js
} catch {
  console.error("copy-docs-renderer: @scalar/api-reference is not installed (run `npm install`); /docs needs it.");
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8"));
const bundle = readFileSync(path.join(path.dirname(entry), "browser", "standalone.js"));
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, "scalar-api-reference.js"), bundle);
writeFileSync(path.join(out, "scalar-api-reference.js.gz"), gzipSync(bundle, { level: 9 }));
writeFileSync(path.join(out, "scalar-api-reference.json"), `${JSON.stringify({ name: pkg.name, version: pkg.version, license: pkg.license })}\n`);
console.log(`copied ${pkg.name}@${pkg.version} standalone bundle to dist/vendor`);
