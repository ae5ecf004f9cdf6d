// Init container of every Deployment: waits until the database holds every
// migration this image ships (prisma/migrations), so a new release's pods start
// only after the release's migration Job has run, whatever applies the manifests
// (kubectl apply -k, Argo CD, Flux) and in whatever order. Migrations the image
// does not know (a newer release's) are ignored: an older release, rolled back or
// rescheduled, still starts, as the upgrade notes promise. Exits 0 when ready;
// never gives up (the Deployment's progressDeadlineSeconds reports a stuck
// rollout). Mounted from a ConfigMap; pg comes from the image (NODE_PATH).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { Client } = require("pg");

const dir = process.env.MIGRATIONS_DIR || "/app/prisma/migrations";
const everyMs = Number(process.env.SCHEMA_WAIT_INTERVAL_MS || 3000);
const shipped = fs
  .readdirSync(dir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "migration.sql")))
  .map((d) => d.name)
  .sort();

async function missing() {
  const client = new Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5000, application_name: "wait-for-schema" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    const applied = new Set(rows.map((r) => r.migration_name));
    return shipped.filter((m) => !applied.has(m));
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function main() {
  for (;;) {
    try {
      const left = await missing();
      if (left.length === 0) {
        console.log(`schema ready: ${shipped.length} migrations applied`);
        return;
      }
      console.log(`waiting for the migration Job: ${left.length} migration(s) not applied yet, first ${left[0]}`);
    } catch (err) {
      // Never the connection string: only the error's code (42P01 = no migrations table yet).
      console.log(`waiting for the database: ${(err && (err.code || err.name)) || "error"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

main();
