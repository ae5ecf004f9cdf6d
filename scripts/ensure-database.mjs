#!/usr/bin/env node
// Creates the database named in DATABASE_URL if it does not exist yet, and fails
// with a readable message when REDIS_URL is malformed or Redis or Postgres cannot be
// reached (Redis first: nothing is created then); never printing a URL's password.
import { createRequire } from "node:module";
import net from "node:net";
import pg from "pg";

const { parseRedisUrl } = createRequire(import.meta.url)("../packages/config/dist/index.js");

// REDIS_URL is one server (redis://host:port) or a cluster's seed nodes
// (redis+cluster://host:port,host:port), read by the services' own parser (built by
// `npm run up` before this runs): each node must answer a TCP connect.
let redisNodes;
try {
  const target = parseRedisUrl(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  redisNodes = target.mode === "cluster" ? target.nodes : [new URL(target.url)].map((u) => ({ host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 6379) }));
} catch (err) {
  // The parser's messages name the setting, never its value (it may hold a password).
  console.error(`${err.message} (see the README's configuration table)`);
  process.exit(1);
}
for (const node of redisNodes) {
  await new Promise((resolve) => {
    const socket = net.connect(node.port, node.host, () => {
      socket.end();
      resolve();
    });
    socket.setTimeout(3000, () => socket.destroy(new Error("timeout")));
    socket.on("error", (err) => {
      console.error(`Cannot reach Redis at ${node.host}:${node.port}: ${err.message}\nStart it, or set REDIS_URL.`);
      process.exit(1);
    });
  });
}

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
