#!/usr/bin/env node
import { loadDotEnv } from "@svc/config";
import { createStore, type Store } from "@svc/store";
import { loadAdminConfig } from "./config";
import { CliError, runCommand } from "./commands";
import { CommandOutput } from "./output";

/**
 * Operator CLI: `npm run admin -- <resource> <action> [--flags]`. Prints exactly
 * one JSON object on stdout (or the table `--format table` asks for); on bad input
 * prints a message on stderr and exits 2; `doctor` exits 3 when a check cannot answer live.
 */
async function main(argv: string[]): Promise<number> {
  loadDotEnv();
  let store: Store | undefined;
  try {
    const config = loadAdminConfig();
    if (!process.env.DATABASE_URL) process.stderr.write(`${defaultDatabaseNotice(config.DATABASE_URL)}\n`);
    store = createStore({ databaseUrl: config.DATABASE_URL, poolSize: 2, applicationName: "admin-cli" });
    const result = await runCommand(argv, { store, secret: config.KEY_HASH_SECRET, now: () => new Date(), routes: config });
    if (result instanceof CommandOutput) {
      process.stdout.write(`${result.text ?? JSON.stringify(result.json, null, 2)}\n`);
      return result.exitCode;
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    return err instanceof CliError ? 2 : 1;
  } finally {
    await store?.close();
  }
}

/**
 * Said on stderr when DATABASE_URL is unset: the CLI writes to the documented
 * default database, which may not be the one a fleet started with another
 * DATABASE_URL uses (`.env.local` holds secrets only, never connection settings).
 */
function defaultDatabaseNotice(url: string): string {
  const u = new URL(url);
  return `DATABASE_URL is not set: using the default database ${u.hostname}:${u.port || "5432"}${u.pathname} (set DATABASE_URL to use another)`;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
