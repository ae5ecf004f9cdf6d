import { revokeApiKey } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

/** key revoke --id ID: takes effect on the next request; revoking twice keeps the first time. */
export async function keyRevoke(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const id = required(parseFlags(args, ["id"]), "id");
  const revoked = await revokeApiKey(ctx.store.pool, id);
  if (!revoked) throw new CliError(`no key with id "${id}"`);
  return { object: "api_key", id: revoked.id, revoked: true, revoked_at: revoked.revoked_at.toISOString() };
}
