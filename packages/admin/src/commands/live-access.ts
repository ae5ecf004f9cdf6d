import { maskEmailInput, money, scopesForNewKey } from "@svc/domain";
import {
  accountRequiresIpAllowlist,
  decideLiveAccess,
  getAccount,
  getLiveAccessRequest,
  listLiveAccessRequests,
  withTransaction,
  type LiveAccessRequest,
} from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";
import { issueKey } from "./key-create";

/**
 * The live-access review of /get-test-key (docs/going-live.md). Every issued personal
 * test key also asks for live access; these commands list the requests and answer
 * them, and the answer is kept on the request. E-mail addresses are masked unless
 * `--reveal` is given (the operator replies to the address; logs never need it).
 */
const STATUSES = ["pending", "approved", "declined", "all"] as const;

function present(r: LiveAccessRequest, reveal: boolean) {
  return {
    object: "live_access_request",
    id: r.id,
    email: reveal ? r.email : maskEmailInput(r.email),
    name: r.name,
    company: r.company,
    use_case: r.use_case,
    requested_at: r.created_at.toISOString(),
    account_id: r.account_id,
    status: r.status,
    decided_at: r.decided_at ? r.decided_at.toISOString() : null,
    note: r.note,
    live_key_id: r.live_key_id,
  };
}

/** Splits off the boolean `--reveal` before the string flags are parsed. */
function revealFlag(args: string[]): { reveal: boolean; rest: string[] } {
  return { reveal: args.includes("--reveal"), rest: args.filter((a) => a !== "--reveal") };
}

/** live-access list [--status pending|approved|declined|all] [--limit N] [--reveal]: oldest first, pending by default. */
export async function liveAccessList(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const { reveal, rest } = revealFlag(args);
  const flags = parseFlags(rest, ["status", "limit"]);
  const status = (flags.status ?? "pending") as (typeof STATUSES)[number];
  if (!STATUSES.includes(status)) throw new CliError("--status must be pending, approved, declined or all");
  const limit = flags.limit === undefined ? 100 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError("--limit must be a whole number from 1 to 1000");
  const rows = await listLiveAccessRequests(ctx.store.pool, { status, limit: limit + 1 });
  return { object: "list", status, data: rows.slice(0, limit).map((r) => present(r, reveal)), has_more: rows.length > limit };
}

/** The request, waiting for an answer; a CliError saying why not otherwise. */
async function pendingRequest(client: Parameters<typeof getLiveAccessRequest>[0], id: string): Promise<LiveAccessRequest> {
  const request = await getLiveAccessRequest(client, id, true);
  if (!request) throw new CliError(`no live-access request with id "${id}" (ids start with tkr_; see \`live-access list\`)`);
  if (request.status !== "pending") throw new CliError(`request ${id} was already ${request.status} on ${request.decided_at?.toISOString()}`);
  return request;
}

/**
 * live-access approve --id ID [--note TEXT] [--reveal]: issues a live key on the
 * account of the request's test key (printed once, like `key create`) and records the
 * approval on every waiting request of that account, in one transaction.
 */
export async function liveAccessApprove(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const { reveal, rest } = revealFlag(args);
  const flags = parseFlags(rest, ["id", "note"]);
  const id = required(flags, "id");
  const note = (flags.note ?? "").trim();
  if (note.length > 2000) throw new CliError("--note must be at most 2000 characters");
  const scopes = scopesForNewKey("live", undefined);
  const outcome = await withTransaction(ctx.store.pool, async (client) => {
    const request = await pendingRequest(client, id);
    if (!request.account_id) throw new CliError(`request ${id} has no account left (its test key was deleted): create one with \`account create\` and \`key create\``);
    if (await accountRequiresIpAllowlist(client, request.account_id)) {
      throw new CliError(`account ${request.account_id} requires an IP allowlist on live keys: create the key with \`key create --mode live --allow-ip …\` and decline or note this request`);
    }
    const created = await issueKey(client, ctx.secret, { accountId: request.account_id, mode: "live", scopes, allowIps: [], dailySpendCapMicros: null, expiresAt: null });
    const answered = await decideLiveAccess(client, { id, accountId: request.account_id, decision: "approved", note, liveKeyId: created.id, at: ctx.now() });
    return { request, created, answered };
  });
  const account = await getAccount(ctx.store.pool, outcome.request.account_id as string);
  const balance = account?.balance_micros ?? 0n;
  return {
    object: "live_access_decision",
    decision: "approved",
    request_ids: outcome.answered,
    email: reveal ? outcome.request.email : maskEmailInput(outcome.request.email),
    account_id: outcome.request.account_id,
    balance: money(balance),
    note,
    key: outcome.created,
    next_steps: [
      "Send the key to the requester over a channel you trust; it is not shown again.",
      ...(balance === 0n
        ? [`The balance is 0.00: live lookups answer 402 insufficient_balance until \`npm run admin -- balance topup --account ${outcome.request.account_id} --amount AMOUNT --reason TEXT\`.`]
        : []),
      "Which checks answer live: `npm run admin -- doctor` (docs/going-live.md).",
    ],
  };
}

/** live-access decline --id ID --reason TEXT [--reveal]: records the refusal (with the reason to reply with) on every waiting request of the account. */
export async function liveAccessDecline(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const { reveal, rest } = revealFlag(args);
  const flags = parseFlags(rest, ["id", "reason"]);
  const id = required(flags, "id");
  const reason = required(flags, "reason");
  if (reason.length > 2000) throw new CliError("--reason must be at most 2000 characters");
  const { request, answered } = await withTransaction(ctx.store.pool, async (client) => {
    const request = await pendingRequest(client, id);
    const answered = await decideLiveAccess(client, { id, accountId: request.account_id, decision: "declined", note: reason, liveKeyId: null, at: ctx.now() });
    return { request, answered };
  });
  return {
    object: "live_access_decision",
    decision: "declined",
    request_ids: answered,
    email: reveal ? request.email : maskEmailInput(request.email),
    account_id: request.account_id,
    note: reason,
    next_steps: ["Reply to the requester with the reason (`--reveal` shows the address). The test keys keep working."],
  };
}
