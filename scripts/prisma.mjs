#!/usr/bin/env node
// Runs the Prisma CLI offline-safe: the CLI uses the WebAssembly schema engine and
// the pg driver adapter (prisma.config.ts), so native engines are never needed.
// Pointing the engine variables at an existing file stops the CLI from trying to
// download them (which fails without internet and is pointless with it).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const hook = path.join(root, "scripts", "prisma-wasm-timers.cjs");
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${hook}`.trim(),
};
// DATABASE_URL from the environment, or the documented default (never from .env.local: it holds secrets only).
env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/svc_validate";

const cli = path.join(root, "node_modules", "prisma", "build", "index.js");
const result = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { cwd: root, env, stdio: "inherit" });
process.exit(result.status ?? 1);
