#!/usr/bin/env node
// Screenshots of the documentation as the gateway serves it, for the README:
//   docs/images/reference.png         the API reference at POST /v1/lookup
//   docs/images/guide-test-mode.png   /docs/test-mode
//   docs/images/guide-going-live.png  /docs/going-live (guide-idempotency.png while
//                                     that guide is not in the gateway's list)
//
// Usage: npm run build && node scripts/screenshots.mjs [--url http://localhost:8080] [--out docs/images]
//
// Without --url it starts the built gateway itself, alone, on a throwaway database
// (created and migrated here, dropped at the end) and a Redis prefix of its own, so
// it needs Postgres and Redis as the tests do (DATABASE_URL / REDIS_URL, default the
// local ones) and nothing else. The browser is Debian's Chromium (CHROMIUM_PATH,
// default /usr/bin/chromium), driven by playwright-core; no request leaves the
// gateway. Rerun it whenever the reference or a guide changes: the files are
// overwritten.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { Redis } from "ioredis";
import { chromium } from "playwright-core";
import { startService } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, ROOT } from "./lib.mjs";

const require = createRequire(import.meta.url);
const { values: opts } = parseArgs({ options: { url: { type: "string" }, out: { type: "string", default: path.join(ROOT, "docs", "images") } } });
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const { GUIDES } = require(path.join(ROOT, "services", "gateway", "dist", "pages", "guide-table.js"));
const { ROUTES } = require(path.join(ROOT, "packages", "contract", "dist", "index.js"));

/** The built gateway on a database and Redis prefix of its own; `stop` undoes all of it. */
async function startOwnGateway() {
  const adminUrl = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  const name = `svc_screenshots_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${name}`;
  const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const prefix = `screenshots:${randomBytes(4).toString("hex")}`;
  let gateway;
  const stop = async () => {
    await gateway?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err) => console.error(`screenshots: could not drop ${name}: ${err.message}`));
    await admin.end();
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      for (let cursor = "0"; ; ) {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        if (keys.length > 0) await redis.del(...keys);
        if ((cursor = next) === "0") break;
      }
    } finally {
      redis.disconnect();
    }
  };
  try {
    const migrated = spawnSync(process.execPath, [path.join(ROOT, "scripts", "prisma.mjs"), "migrate", "deploy"], { cwd: ROOT, env: { ...process.env, DATABASE_URL: dbUrl.toString() }, encoding: "utf8" });
    if (migrated.status !== 0) throw new Error(`migrating the throwaway database failed:\n${migrated.stdout}${migrated.stderr}`);
    const secret = randomBytes(16).toString("hex");
    gateway = await startService("gateway", {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "test",
        LOG_LEVEL: "info",
        PORT: "0",
        WEB_CONCURRENCY: "1",
        METRICS_PORT: "0",
        // What the reference shows as the server, as after `npm run up`.
        PUBLIC_BASE_URL: "http://localhost:8080",
        DATABASE_URL: dbUrl.toString(),
        REDIS_URL: redisUrl,
        REDIS_PREFIX: prefix,
        KEY_HASH_SECRET: secret,
        CACHE_HASH_SECRET: `${secret}-cache`,
        DATA_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        FLEET_MESSAGE_KEY: randomBytes(32).toString("base64"),
        SHUTDOWN_TIMEOUT_MS: "5000",
      },
    });
    if (!gateway.url) throw new Error("the gateway did not log the port it listens on");
    return { url: gateway.url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const own = opts.url ? null : await startOwnGateway();
const base = (opts.url ?? own.url).replace(/\/$/, "");
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
try {
  mkdirSync(opts.out, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, colorScheme: "light" });
  const page = await context.newPage();
  const foreign = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(`${base}/`) && !/^(data|blob):/.test(r.url())) foreign.push(r.url());
  });
  const shoot = async (file) => {
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(opts.out, file) });
    console.log(`wrote ${path.relative(ROOT, path.join(opts.out, file))}`);
  };

  // The reference, opened at its first operation.
  const lookup = ROUTES.find((r) => r.operationId === "createLookup");
  const anchor = `tag/${lookup.tag.toLowerCase().replace(/[^a-z0-9]+/g, "-")}/${lookup.operationId}`;
  await page.goto(`${base}/docs`);
  await page.locator(`a[href='#${anchor}']`).first().waitFor({ timeout: 30_000 });
  await page.locator(`a[href='#${anchor}']`).first().click();
  await page.waitForFunction((id) => (document.querySelector(`[id$='${id}']`)?.getBoundingClientRect().top ?? 999) < 200, anchor, { timeout: 10_000 });
  await page.waitForTimeout(500); // let the sidebar's scroll and highlight settle
  await shoot("reference.png");

  // Two guides: test mode, and going live (or idempotency while going live is not served).
  const second = GUIDES.some((g) => g.slug === "going-live") ? "going-live" : "idempotency";
  // Test mode at its table of test numbers: the values are what a newcomer comes for.
  for (const [slug, section] of [["test-mode", "#test-numbers"], [second, ""]]) {
    const res = await page.goto(`${base}/docs/${slug}${section}`);
    if (res?.status() !== 200) throw new Error(`/docs/${slug} answered ${res?.status()}`);
    await shoot(`guide-${slug}.png`);
  }
  if (foreign.length > 0) throw new Error(`requests left the gateway: ${foreign.join(", ")}`);
} finally {
  await browser.close();
  await own?.stop();
}
