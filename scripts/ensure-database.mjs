#!/usr/bin/env node
// Creates the database named in DATABASE_URL if it does not exist yet, and fails
// with a readable message when Postgres or Redis cannot be reached.
import net from "node:net";
import pg from "pg";

const url = new URL(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/svc_validate");
const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
const maintenance = new URL(url);
maintenance.pathname = "/postgres";

const client = new pg.Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 5000 });
try {
  await client.connect();
} catch (err) {
  console.error(`Cannot reach PostgreSQL at ${url.host}: ${err.message}\nStart it, or set DATABASE_URL.`);
  process.exit(1);
}
const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
if (rowCount === 0) {
  await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  console.log(`created database ${name}`);
}
await client.end();

const redis = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
await new Promise((resolve) => {
  const socket = net.connect(Number(redis.port || 6379), redis.hostname, () => {
    socket.end();
    resolve();
  });
  socket.setTimeout(3000, () => socket.destroy(new Error("timeout")));
  socket.on("error", (err) => {
    console.error(`Cannot reach Redis at ${redis.host}: ${err.message}\nStart it, or set REDIS_URL.`);
    process.exit(1);
  });
});
