// Small helpers shared by the repository scripts (no dependencies: they run before `npm install`).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SERVICES, settingOf } from "./service-settings.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npmCmd = process.platform === "win32" ? "npm.cmd" : "npm";

export function step(title) {
  process.stdout.write(`\n==> ${title}\n`);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env: process.env, ...options });
  if (result.status !== 0) {
    process.stderr.write(`\n${command} ${args.join(" ")} failed (exit ${result.status ?? result.signal}).\n`);
    process.exit(result.status ?? 1);
  }
}

/** `npm install` when node_modules is missing or older than the lockfile; cheap otherwise. */
export function installIfNeeded() {
  const marker = path.join(ROOT, "node_modules", ".package-lock.json");
  const lock = path.join(ROOT, "package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return false;
  step("Installing dependencies (npm install)");
  run(npmCmd, ["install", "--no-audit", "--no-fund"]);
  return true;
}

/**
 * The browser tests drive Debian's Chromium (never a browser a test tool downloads). When it
 * is missing, install it with apt-get, as `npm install` is run when node_modules is; when it
 * cannot be installed, stop with a message that says how: browser tests are never skipped.
 * Returns the executable's path (CHROMIUM_PATH, default /usr/bin/chromium).
 */
export function ensureChromium() {
  const chromium = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (existsSync(chromium)) return chromium;
  const fail = (why) => {
    process.stderr.write(
      `\nThe browser tests need Chromium at ${chromium}, and it could not be installed: ${why}.\n` +
        "Install Debian's package (as root: apt-get update && apt-get install -y chromium), or set CHROMIUM_PATH to a Chromium executable.\n" +
        "The browser tests are part of the suite and are not skipped.\n",
    );
    process.exit(1);
  };
  if (process.env.CHROMIUM_PATH) fail("CHROMIUM_PATH points at a file that does not exist");
  if (process.platform !== "linux") fail(`automatic install is only done on Debian-like Linux (this is ${process.platform})`);
  const found = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
  if (!found("apt-get")) fail("apt-get is not available on this machine");
  const asRoot = process.getuid?.() === 0 ? [] : found("sudo") ? ["sudo", "-n"] : null;
  if (!asRoot) fail("installing needs root (or password-less sudo)");
  step("Installing Chromium for the browser tests (apt-get install chromium)");
  const apt = (...args) => {
    const [cmd, ...rest] = [...asRoot, "apt-get", ...args];
    return spawnSync(cmd, rest, { cwd: ROOT, stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).status === 0;
  };
  // A fresh machine may have no package lists yet; refresh them only when the install needs it.
  const installed = apt("install", "-y", "chromium") || (apt("update") && apt("install", "-y", "chromium"));
  if (!installed) fail("apt-get install -y chromium failed (see its output above)");
  if (!existsSync(chromium)) fail("apt-get installed the package but the executable is not there");
  return chromium;
}

export function build() {
  step("Building (prisma generate + turbo run build)");
  run(npmCmd, ["run", "--silent", "build"], { env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" } });
}

/** The secrets `npm run up` generates for a checkout; `.env.local` holds these and nothing else. */
export const GENERATED_SECRETS = {
  KEY_HASH_SECRET: () => randomBytes(32).toString("hex"),
  CACHE_HASH_SECRET: () => randomBytes(32).toString("hex"),
  DATA_ENCRYPTION_KEY: () => randomBytes(32).toString("base64"),
  FLEET_MESSAGE_KEY: () => randomBytes(32).toString("base64"),
  // Each service's own database role and Redis user (hex: they go into URLs unescaped).
  ...Object.fromEntries(SERVICES.flatMap((s) => ["DATABASE_PASSWORD", "REDIS_PASSWORD"].map((w) => [settingOf(s, w), () => randomBytes(24).toString("hex")]))),
};

export const DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/svc_validate";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * What `npm run up` gives each service: DATABASE_URL as its own role (svc_gateway, ...)
 * on the database of DATABASE_URL (whose user owns the schema), and REDIS_URL as its
 * own ACL user (<REDIS_PREFIX>-gateway, ...) on the Redis of REDIS_URL, with the
 * passwords of `.env.local` (ensureDotEnv first). scripts/db-deploy.mjs and
 * scripts/redis-acl.mjs --apply make those roles and users. A service's own
 * GATEWAY_DATABASE_URL / GATEWAY_REDIS_URL (and so on) wins when set: a fleet whose
 * roles and users were made some other way.
 */
export function serviceConnections(env = process.env) {
  const prefix = env.REDIS_PREFIX || "svc";
  const database = new URL(env.DATABASE_URL || DEFAULT_DATABASE_URL);
  const redisUrl = env.REDIS_URL || DEFAULT_REDIS_URL;
  return Object.fromEntries(
    SERVICES.map((service) => {
      const db = new URL(database);
      db.username = `svc_${service.replaceAll("-", "_")}`;
      db.password = env[settingOf(service, "DATABASE_PASSWORD")] ?? "";
      const user = `${encodeURIComponent(`${prefix}-${service}`)}:${encodeURIComponent(env[settingOf(service, "REDIS_PASSWORD")] ?? "")}@`;
      // Any user:password of REDIS_URL (the operator's) is replaced by the service's.
      const redis = redisUrl.replace(/^(rediss?(?:\+cluster)?:\/\/)(?:[^@/]*@)?/, `$1${user}`);
      return [service, { DATABASE_URL: env[settingOf(service, "DATABASE_URL")] || db.toString(), REDIS_URL: env[settingOf(service, "REDIS_URL")] || redis }];
    }),
  );
}

/** The settings scripts/db-deploy.mjs and scripts/redis-acl.mjs read to make those roles and users. */
export function serviceCredentialSettings(env = process.env) {
  const connections = serviceConnections(env);
  return Object.fromEntries(
    SERVICES.flatMap((s) => [
      [settingOf(s, "DATABASE_URL"), connections[s].DATABASE_URL],
      [settingOf(s, "REDIS_PASSWORD"), env[settingOf(s, "REDIS_PASSWORD")] ?? ""],
    ]),
  );
}

/**
 * Whether `name` (one of GENERATED_SECRETS) is needed in this environment: a service's
 * database or Redis password is not when its own URL is given (GATEWAY_DATABASE_URL,
 * GATEWAY_REDIS_URL, ...: serviceConnections uses those as they are).
 */
function neededHere(name) {
  const m = /^(.+)_(DATABASE|REDIS)_PASSWORD$/.exec(name);
  return !m || !process.env[`${m[1]}_${m[2]}_URL`];
}

/**
 * `.env.local` holds this checkout's generated secrets (git-ignored), so the
 * services and the admin CLI of every shell share them. Only secrets: connection
 * settings (DATABASE_URL, REDIS_URL, REDIS_PREFIX, ...) come from the environment
 * or the documented defaults, so a file written by `DATABASE_URL=… npm run up`
 * cannot send a later shell's admin CLI to that database, or a default run's to
 * another. Lines of other settings that older versions wrote are dropped.
 * Variables already in the environment win; when all the secrets are there
 * (containers, CI, tests), the file is neither read nor written.
 */
export function ensureDotEnv(dir = ROOT) {
  const names = Object.keys(GENERATED_SECRETS);
  if (names.every((name) => process.env[name] || !neededHere(name))) return;
  const file = path.join(dir, ".env.local");
  const existing = existsSync(file) ? readFileSync(file, "utf8") : "";
  const values = {};
  for (const line of existing.split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m && names.includes(m[1]) && m[2]) values[m[1]] = m[2];
  }
  // Secrets a newer version needs are added, never replaced.
  for (const [name, make] of Object.entries(GENERATED_SECRETS)) values[name] ??= make();
  const text =
    "# Generated by `npm run up`: this checkout's secrets, and only those. Environment variables override them;\n" +
    "# DATABASE_URL, REDIS_URL and the other settings come from the environment (defaults: README, Configuration).\n" +
    names.map((name) => `${name}=${values[name]}\n`).join("");
  if (text !== existing) writeFileSync(file, text, { mode: 0o600 });
  // writeFileSync's mode applies only when it creates the file: an older file (or one
  // copied with a looser mode) is made private here, every time.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  for (const name of names) process.env[name] ||= values[name];
}
