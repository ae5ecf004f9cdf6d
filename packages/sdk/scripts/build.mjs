#!/usr/bin/env node
// Builds the publishable package from `tsc -b`'s declarations (dist/types):
//  1. esbuild bundles src/index.ts into dist/index.mjs (ESM) and dist/index.cjs (CJS).
//     The contract's schemas and error table (and the few pure tables of @svc/domain
//     they use) are bundled in from source; @sinclair/typebox stays a dependency.
//  2. API Extractor rolls the declarations into one dist/index.d.ts, inlining the
//     contract's types (bundledPackages), copied to index.d.mts / index.d.cts.
//  3. The bundles are checked: no private package, no server-only dependency
//     (ajv, libphonenumber), no static node: import in the core.
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = path.resolve(PKG, "..", "..");
const dist = (f) => path.join(PKG, "dist", f);
const pkg = JSON.parse(readFileSync(path.join(PKG, "package.json"), "utf8"));
const external = Object.keys(pkg.dependencies ?? {});

// Workspace packages are read from their TypeScript sources and marked free of side
// effects, so only what the SDK uses ends up in the bundle.
const workspaceSources = {
  name: "workspace-sources",
  setup(b) {
    b.onResolve({ filter: /^@svc\/(contract|domain)$/ }, (args) => ({
      path: path.join(ROOT, "packages", args.path.slice("@svc/".length), "src", "index.ts"),
      sideEffects: false,
    }));
    b.onResolve({ filter: /\.ts$|^\.\.?\// }, (args) => {
      if (!args.importer.includes(`${path.sep}packages${path.sep}contract${path.sep}`) && !args.importer.includes(`${path.sep}packages${path.sep}domain${path.sep}`)) return undefined;
      return { path: require_ts(path.resolve(args.resolveDir, args.path)), sideEffects: false };
    });
  },
};
function require_ts(p) {
  for (const candidate of [p, `${p}.ts`, path.join(p, "index.ts")]) {
    try {
      if (readFileSync(candidate)) return candidate;
    } catch {
      // next
    }
  }
  return p;
}

const common = {
  entryPoints: [path.join(PKG, "src", "index.ts")],
  bundle: true,
  platform: "neutral",
  mainFields: ["module", "main"],
  target: "es2022",
  external: [...external, "node:*"],
  plugins: [workspaceSources],
  sourcemap: true,
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
};
const esm = await build({ ...common, format: "esm", outfile: dist("index.mjs") });
await build({ ...common, format: "cjs", outfile: dist("index.cjs"), platform: "node" });

// Modules that contribute code to the bundle (the metafile also lists those tree-shaken away).
const inputs = Object.entries(Object.values(esm.metafile.outputs).find((o) => o.entryPoint)?.inputs ?? {}).filter(([, v]) => v.bytesInOutput > 0).map(([k]) => k);
const forbidden = inputs.filter((f) => /node_modules\/(ajv|ajv-formats|libphonenumber-js|ipaddr\.js)\//.test(f) || /packages\/(domain\/src\/(phone|rows|email|address-policy|ip-allowlist)|contract\/src\/(validation|openapi))\.ts$/.test(f));
if (forbidden.length) throw new Error(`The SDK bundle pulls in server-only code:\n  ${forbidden.join("\n  ")}`);
const esmText = readFileSync(dist("index.mjs"), "utf8");
if (/^import[^;]*from\s*["']node:/m.test(esmText)) throw new Error("The ESM bundle imports node: modules statically; only dynamic imports are allowed in the core.");
if (/@svc\//.test(esmText.replace(/\/\/.*$/gm, ""))) throw new Error("The bundle still names a private @svc/ package.");

// One declaration file, with the contract's types inlined.
const config = ExtractorConfig.prepare({
  configObjectFullPath: undefined,
  packageJsonFullPath: path.join(PKG, "package.json"),
  configObject: {
    projectFolder: PKG,
    mainEntryPointFilePath: path.join(PKG, "dist", "types", "index.d.ts"),
    bundledPackages: ["@svc/contract", "@svc/domain"],
    compiler: { tsconfigFilePath: path.join(PKG, "scripts", "tsconfig.api-extractor.json") },
    apiReport: { enabled: false },
    docModel: { enabled: false },
    tsdocMetadata: { enabled: false },
    dtsRollup: { enabled: true, untrimmedFilePath: dist("index.d.ts") },
    messages: {
      compilerMessageReporting: { default: { logLevel: "warning" } },
      extractorMessageReporting: { default: { logLevel: "none" }, "ae-wrong-input-file-type": { logLevel: "error" } },
      tsdocMessageReporting: { default: { logLevel: "none" } },
    },
  },
});
const result = Extractor.invoke(config, { localBuild: true, showVerboseMessages: false, messageCallback: (m) => {
  if (m.logLevel === "warning" || m.logLevel === "error") process.stderr.write(`api-extractor: ${m.text}\n`);
  m.handled = true;
} });
if (!result.succeeded) throw new Error(`API Extractor failed (${result.errorCount} errors)`);
const dts = readFileSync(dist("index.d.ts"), "utf8");
const leaked = [...dts.matchAll(/from\s+["'](@svc\/[^"']+|ajv[^"']*|libphonenumber-js)["']/g)].map((m) => m[1]);
if (leaked.length) throw new Error(`The declarations still import ${[...new Set(leaked)].join(", ")}`);
copyFileSync(dist("index.d.ts"), dist("index.d.mts"));
copyFileSync(dist("index.d.ts"), dist("index.d.cts"));
rmSync(dist("types/tsdoc-metadata.json"), { force: true });
process.stdout.write(`@svc/sdk ${pkg.version}: dist/index.mjs ${(esmText.length / 1024).toFixed(1)} KB, ${inputs.length} modules bundled\n`);
