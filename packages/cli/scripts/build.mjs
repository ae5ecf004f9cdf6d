#!/usr/bin/env node
// Bundles the CLI into one file, dist/svc.js, after `tsc -b` has type-checked it.
// Why: `svc` is a process per command, so its start-up is paid on every call. Loaded
// module by module, @sinclair/typebox alone (through @svc/sdk) took ~65 ms of a
// ~135 ms `svc --version`; bundled from the ESM builds of the SDK and typebox,
// tree-shaken to what is used, the whole program is one file read at start.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(PKG, "package.json"), "utf8"));
const result = await build({
  entryPoints: [path.join(PKG, "src", "cli.ts")],
  outfile: path.join(PKG, "dist", "svc.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  mainFields: ["module", "main"],
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
});
const bytes = Object.values(result.metafile.outputs)[0]?.bytes ?? 0;
process.stdout.write(`@svc/cli ${pkg.version}: dist/svc.js ${(bytes / 1024).toFixed(1)} KB\n`);
