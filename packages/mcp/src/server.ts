import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { formatAmount, LIMITS, parseAmount, priceModeOf, quoteLookup, SvcError, type Client, type Job, type Lookup } from "@svc/sdk";
import { z } from "zod";
import { CONFIRM_NUMBERS_ABOVE, thresholdText, type McpConfig } from "./config.js";
import { confirmationReasons, decide, readApproval, sendSettling, type Assessment } from "./confirm.js";
import { ConfirmationBook } from "./confirmation-token.js";
import { confirmedLookupKey, createJobOnce } from "./idempotency.js";
import { confirmationToken, confirmMaxCost, idempotencyKey, jobId, jobListInput, lookupId, lookupInput, resultsInput, waitOf, webhookEndpointId } from "./inputs.js";
import type { Log } from "./log.js";
import { jobFinished, presentEstimate, presentJob, presentLookup, presentRow } from "./present.js";
import { errorOf, errorResult, ok } from "./results.js";
import { MCP_VERSION } from "./version.js";

export interface ServerDeps {
  config: McpConfig;
  /** The API client; it holds the key (from SVC_API_KEY) and never shows it. */
  client: Client;
  log: Log;
  /** Scrubs the key from any text leaving the process. */
  redact: (text: string) => string;
  /**
   * The confirmation tokens issued and spent. One per process: with the stateless
   * HTTP transport every request gets its own server, and a token issued by one must
   * be accepted by the next. Default: one shared by every server of this process.
   */
  confirmations?: ConfirmationBook;
}

let processBook: ConfirmationBook | undefined;
/** The process's confirmation book, made on first use with the configured lifetime. */
function sharedBook(config: McpConfig): ConfirmationBook {
  processBook ??= new ConfirmationBook({ ttlMs: config.confirmTtlMs });
  return processBook;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** get_job with a progress token polls in slices this long, notifying between them. */
const PROGRESS_SLICE_SECONDS = 2;

// --- Outputs (loose: the API may add fields within v1) ------------------------

const row = z.looseObject({ row: z.number(), kind: z.string(), checks: z.array(z.looseObject({ service: z.string(), status: z.string() })) });
const lookupOut = {
  lookup: z.looseObject({ id: z.string(), status: z.string(), livemode: z.boolean(), rows: z.array(row) }),
  cost: z.object({ max_cost: z.string(), max_cost_sent: z.string(), confirmed: z.boolean(), currency: z.literal("USD") }),
  replayed: z.boolean(),
};
const jobOut = z.looseObject({ id: z.string(), status: z.string(), finished: z.boolean(), progress: z.looseObject({ done: z.number(), checks_total: z.number(), percent: z.number() }), next: z.string() });
const confirmationInfo = z.object({
  required: z.boolean(),
  reasons: z.array(z.string()),
  confirm_max_cost: z.string().nullable(),
  confirmation_token: z.string().nullable(),
  expires_at: z.string().nullable(),
  threshold: z.string(),
});

/** A count as the descriptions write it: thousands separated by commas. */
const count = (n: number): string => n.toLocaleString("en-US");

/** Guidance for the agent, sent once at initialisation. */
function instructions(config: McpConfig): string {
  return [
    "Phone-number and e-mail validation API (spam risk, WhatsApp/carrier, mailbox exists).",
    "Free: list_services, estimate_job, get_lookup, get_job, get_job_results, get_account.",
    `Paying: lookup (up to ${count(LIMITS.lookupIdentifiers)} identifiers, answers now) and create_job (up to ${count(LIMITS.jobIdentifiers)}, runs in the background). Before sending, they compute the maximum possible cost; above ${thresholdText(config)} USD or over ${CONFIRM_NUMBERS_ABOVE} numbers they answer confirmation_required with the amount and a confirmation_token instead: ask the user, then repeat exactly the same call adding confirm_max_cost (the approved amount) and that confirmation_token. A token confirms one call (spent once it is done or refused for good; after an error with retryable: true, repeat the identical call with the same token), expires after a few minutes and fits only the call it was quoted for; never send confirm_max_cost on a first call.`,
    "spend_cap_reached means this key can spend nothing more today (until 00:00 UTC): stop calling paying tools.",
    "Errors come back as results with isError and error.code; only retry when error.retryable is true.",
  ].join("\n");
}

/**
 * The MCP server: one tool per thing an agent does with the API. Every paying tool
 * goes through `decide` (see confirm.ts) before any request that can spend.
 */
export function createMcpServer(deps: ServerDeps): McpServer {
  const { config, client, log, redact } = deps;
  const book = deps.confirmations ?? sharedBook(config);
  const server = new McpServer(
    { name: "svc-mcp", title: "Phone and e-mail validation", version: MCP_VERSION },
    // A job carries at most LIMITS.jobIdentifiers identifiers (plus a few other arguments); anything far larger is refused before it is parsed into tool arguments.
    { instructions: instructions(config), capabilities: { tools: {} }, maxToolInputElements: LIMITS.jobIdentifiers + 100 },
  );

  /** Registers a tool with the shared wrapper: errors become readable results, the key is scrubbed, one log line per call. */
  function tool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
    name: string,
    def: { title: string; description: string; input: I; output: O; readOnly: boolean; idempotent?: boolean },
    run: (args: z.infer<z.ZodObject<I>>, extra: Extra) => Promise<CallToolResult>,
  ): void {
    server.registerTool(
      name,
      {
        title: def.title,
        description: def.description,
        inputSchema: def.input,
        // Loose at the top too: the API may add fields within v1, and clients validate what they get.
        outputSchema: z.looseObject(def.output),
        annotations: { title: def.title, readOnlyHint: def.readOnly, destructiveHint: false, idempotentHint: def.idempotent ?? def.readOnly, openWorldHint: true },
      },
      (async (args: z.infer<z.ZodObject<I>>, extra: Extra) => {
        const started = Date.now();
        let result: CallToolResult;
        try {
          result = await run(args, extra);
        } catch (err) {
          // A call the client cancelled gets no answer, and is no failure of ours: not logged as one.
          if (!(err instanceof SvcError) && !extra.signal.aborted) log.error("tool failed", { tool: name, error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ""}` : String(err) });
          result = errorResult(err, name);
        }
        const safe = JSON.parse(redact(JSON.stringify(result))) as CallToolResult;
        const error = errorOf(safe);
        const outcome = extra.signal.aborted ? "cancelled" : safe.isError ? (error?.code ?? "error") : "ok";
        log.info("tool call", { tool: name, outcome, request_id: error?.request_id ?? undefined, ms: Date.now() - started });
        return safe;
      }) as never,
    );
  }

  /** Catalog prices for the key's mode: test keys 0, live and agent keys the live price. */
  const priceMode = priceModeOf(config.keyKind);

  /**
   * The maximum possible cost of a lookup, the SDK's quote from the account's catalog
   * (GET /v1/services with the key). No estimate call: it needs jobs:write, which a
   * lookup-only agent key does not have, and it applies job limits.
   */
  async function lookupAssessment(args: { numbers?: string[]; emails?: string[]; checks: string[] }, signal: AbortSignal): Promise<Assessment> {
    const quote = quoteLookup(await client.services.list({ signal }), priceMode, args);
    return { ...quote, livemode: priceMode === "live" };
  }

  tool(
    "lookup",
    {
      title: "Look up phone numbers and e-mail addresses",
      description:
        `Checks up to ${count(LIMITS.lookupIdentifiers)} phone numbers and e-mail addresses now (spam reports, WhatsApp, carrier, mailbox exists…) and returns one row per identifier with every check's answer. ` +
        `Costs money with a live key (only conclusive answers are billed). Computes the maximum possible cost first: above ${thresholdText(config)} USD or over ${CONFIRM_NUMBERS_ABOVE} numbers it answers confirmation_required (amount and a one-call confirmation_token) instead; once the user approves, repeat the same call adding confirm_max_cost and confirmation_token. ` +
        "A confirmed call that fails with retryable: true keeps its token: repeating it identically answers with the first lookup if that one was done, never a second charge.",
      input: {
        ...lookupInput,
        confirm_max_cost: confirmMaxCost.optional(),
        confirmation_token: confirmationToken.optional(),
        idempotency_key: idempotencyKey.optional(),
      },
      output: lookupOut,
      readOnly: false,
      idempotent: false,
    },
    async (args, extra) => {
      const read = readApproval("lookup", args, book);
      if ("refused" in read) return read.refused;
      const a = await lookupAssessment(args, extra.signal);
      const d = decide("lookup", args, a, read.approval, book, config);
      if (!d.proceed) return d.result;
      const body = { numbers: args.numbers, emails: args.emails, checks: args.checks, wait: args.wait, max_cost: { amount: d.maxCost } };
      // A confirmed lookup's key comes from its token, so the repeat a released token allows is the same request.
      const idempotencyKey = args.idempotency_key ?? (d.hold ? confirmedLookupKey(d.hold.ticket.nonce) : undefined);
      try {
        const res = await sendSettling(d.hold, () => client.request<Lookup>("createLookup", { body, options: { idempotencyKey, signal: extra.signal } }));
        return ok({ lookup: presentLookup(res.data), cost: { max_cost: formatAmount(a.maxCostMicros), max_cost_sent: d.maxCost, confirmed: d.confirmed, currency: "USD" }, replayed: res.replayed });
      } catch (err) {
        return errorResult(err, "lookup", { maxCostSent: d.maxCost, confirmationKept: d.hold?.state === "released" });
      }
    },
  );

  tool(
    "get_lookup",
    {
      title: "Read a lookup",
      description: "Reads a lookup by id (lkp_…), waiting up to `wait` seconds for pending checks. Free. Inputs come back masked; e164/email unmasked.",
      input: {
        id: lookupId,
        wait: waitOf("while checks are pending"),
      },
      output: { lookup: lookupOut.lookup },
      readOnly: true,
    },
    async (args, extra) => ok({ lookup: presentLookup(await client.lookups.get(args.id, { wait: args.wait }, { signal: extra.signal })) }),
  );

  tool(
    "estimate_job",
    {
      title: "Estimate a bulk job",
      description:
        "Counts a list (valid, invalid, duplicate, cached) and gives the maximum possible cost of create_job with the same arguments, and whether it would need confirmation. When it would, it also gives the confirmation_token for create_job with exactly these numbers, emails and checks (and no other arguments): once the user approves confirm_max_cost, pass both to create_job. Free: stores and checks nothing.",
      input: jobListInput,
      output: { estimate: z.looseObject({ max_cost: z.string(), checks_total: z.number() }), confirmation: confirmationInfo },
      readOnly: true,
    },
    async (args, extra) => {
      const e = await client.jobs.estimate({ numbers: args.numbers, emails: args.emails, checks: args.checks }, { signal: extra.signal });
      const a = assessEstimate(e);
      const reasons = confirmationReasons(a, config);
      // The quote is create_job's: the token fits a create_job with exactly this list and these checks.
      const issued = reasons.length > 0 ? book.issue("create_job", { numbers: args.numbers, emails: args.emails, checks: args.checks }, a.maxCostMicros) : null;
      return ok({
        estimate: presentEstimate(e),
        confirmation: {
          required: reasons.length > 0,
          reasons,
          confirm_max_cost: issued ? formatAmount(a.maxCostMicros) : null,
          confirmation_token: issued?.token ?? null,
          expires_at: issued ? new Date(issued.expiresAt).toISOString() : null,
          threshold: thresholdText(config),
        },
      });
    },
  );

  tool(
    "create_job",
    {
      title: "Start a bulk job",
      description:
        `Starts a background job over up to ${count(LIMITS.jobIdentifiers)} numbers and e-mail addresses; follow it with get_job and read answers with get_job_results. ` +
        `Reserves the maximum possible cost up front with a live key. Estimates first: above ${thresholdText(config)} USD or over ${CONFIRM_NUMBERS_ABOVE} numbers it answers confirmation_required (amount and a one-call confirmation_token) instead; once the user approves, repeat the same call adding confirm_max_cost and confirmation_token. ` +
        "Repeating the same call within 24 hours returns the same job (replayed: true), never a second charge; a confirmed call that fails with retryable: true keeps its token for that repeat. Pass a new idempotency_key to run the same list again on purpose.",
      input: {
        ...jobListInput,
        confirm_max_cost: confirmMaxCost.optional(),
        confirmation_token: confirmationToken.optional(),
        idempotency_key: idempotencyKey.optional(),
        webhook_endpoint_id: webhookEndpointId,
      },
      output: { job: jobOut, replayed: z.boolean(), idempotency_key: z.string().optional(), cost: z.object({ max_cost: z.string(), max_cost_sent: z.string(), confirmed: z.boolean(), currency: z.literal("USD") }) },
      readOnly: false,
      idempotent: true,
    },
    async (args, extra) => {
      const read = readApproval("create_job", args, book);
      if ("refused" in read) return read.refused;
      const approved = read.approval ? formatAmount(read.approval.limitMicros) : null;
      const list = { numbers: args.numbers, emails: args.emails, checks: args.checks };
      // With an approval the estimate carries its amount as max_cost: the API itself refuses a dearer list
      // (cost_limit_exceeded) before anything is created, so the idempotency key is not spent on a refusal.
      let e;
      try {
        e = await client.jobs.estimate(approved === null ? list : { ...list, max_cost: { amount: approved } }, { signal: extra.signal });
      } catch (err) {
        return errorResult(err, "create_job", { maxCostSent: approved });
      }
      const a = assessEstimate(e);
      const d = decide("create_job", args, a, read.approval, book, config);
      if (!d.proceed) return d.result;
      const body: Record<string, unknown> = { ...list, max_cost: { amount: d.maxCost } };
      if (args.webhook_endpoint_id !== undefined) body.webhook_endpoint_id = args.webhook_endpoint_id;
      try {
        const res = await sendSettling(d.hold, () => createJobOnce(client, body, args.idempotency_key, extra.signal));
        return ok({
          job: presentJob(res.data),
          replayed: res.replayed,
          ...(res.idempotencyKey ? { idempotency_key: res.idempotencyKey } : {}),
          cost: { max_cost: e.max_cost.amount, max_cost_sent: d.maxCost, confirmed: d.confirmed, currency: "USD" },
        });
      } catch (err) {
        return errorResult(err, "create_job", { maxCostSent: d.maxCost, confirmationKept: d.hold?.state === "released" });
      }
    },
  );

  tool(
    "get_job",
    {
      title: "Read a job and its progress",
      description:
        `Status, progress (checks done of checks_total, percent) and cost of a job. With wait (1-${LIMITS.maxWaitSeconds} s) it holds until the job finishes or the time is up, sending MCP progress notifications when the client asks for them. Free.`,
      input: { id: jobId, wait: waitOf("for the job to finish") },
      output: { job: jobOut },
      readOnly: true,
    },
    async (args, extra) => {
      const token = extra._meta?.progressToken;
      const wait = args.wait ?? 0;
      if (wait === 0 || token === undefined) return ok({ job: presentJob(await client.jobs.get(args.id, { wait }, { signal: extra.signal })) });
      // The API's long poll answers early only when the job is final; slices of two seconds give the client
      // progress on the way. A notification goes out only when another poll follows: one written right
      // before the result is dropped by the v1 client, which dispatches notifications a tick after responses
      // (modelcontextprotocol/typescript-sdk#2580), and the result carries the final progress anyway.
      const deadline = Date.now() + wait * 1000;
      let job: Job;
      for (;;) {
        const slice = Math.max(1, Math.min(PROGRESS_SLICE_SECONDS, Math.ceil((deadline - Date.now()) / 1000)));
        job = await client.jobs.get(args.id, { wait: slice }, { signal: extra.signal });
        if (jobFinished(job) || Date.now() >= deadline) break;
        const p = job.progress;
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: p.done, total: p.checks_total, message: `${job.status}: ${p.done} of ${p.checks_total} checks` } });
      }
      return ok({ job: presentJob(job) });
    },
  );

  tool(
    "get_job_results",
    {
      title: "Page through a job's results",
      description:
        "One page of a job's answers in input order (one row per identifier with every check). Pass next_cursor as `after` for the next page. Filters (status, registered) apply to one service (default: the job's first check). Free.",
      input: { id: jobId, ...resultsInput },
      output: { job_id: z.string(), rows: z.array(row), has_more: z.boolean(), next_cursor: z.string().nullable(), next: z.string().optional() },
      readOnly: true,
    },
    async (args, extra) => {
      const page = await client.jobs.resultsPage(
        args.id,
        { after: args.after, limit: args.limit ?? 50, service: args.service, status: args.status, registered: args.registered },
        { signal: extra.signal },
      );
      return ok({
        job_id: args.id,
        rows: page.data.map(presentRow),
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        ...(page.has_more && page.next_cursor ? { next: `Call get_job_results with id "${args.id}" and after: "${page.next_cursor}" for the next page.` } : {}),
      });
    },
  );

  tool(
    "get_account",
    {
      title: "Account balance and limits",
      description: "Balance, reserved and available money, today's usage, and the limits that apply to this key: its daily spend cap (used and left), the account's caps, request rate and sizes. Free.",
      input: {},
      output: { account: z.looseObject({ balance: z.string(), available: z.string() }), limits: z.looseObject({}), key: z.object({ kind: z.string(), confirm_above: z.string() }) },
      readOnly: true,
    },
    async (_args, extra) => {
      const [acct, limits] = await Promise.all([client.account.get({ signal: extra.signal }), client.limits.get({ signal: extra.signal })]);
      const cap = (c: { limit: { amount: string }; used: { amount: string }; resets_at: string } | null) =>
        c ? { limit: c.limit.amount, used: c.used.amount, left: leftOf(c.limit.amount, c.used.amount), resets_at: c.resets_at } : null;
      return ok({
        account: {
          id: acct.id,
          name: acct.name,
          livemode: acct.livemode,
          balance: acct.balance.amount,
          reserved: acct.reserved.amount,
          available: acct.available.amount,
          currency: "USD",
          today: { ...acct.today, spend: acct.today.spend.amount },
        },
        limits: {
          key_daily_spend_cap: cap(limits.key_daily_spend_cap),
          account_daily_spend_cap: cap(limits.account_daily_spend_cap),
          daily_identifiers_cap: limits.daily_identifiers_cap,
          request_rate: limits.request_rate,
          request_sizes: limits.request_sizes,
        },
        key: { kind: config.keyKind, confirm_above: thresholdText(config) },
      });
    },
  );

  tool(
    "list_services",
    {
      title: "List the checks and prices",
      description: "Every check this key may use (code, aliases, input type, real-time or bulk only, countries) with its price per conclusive answer for this key's mode (test keys: 0). Free.",
      input: {},
      output: { price_mode: z.string(), account_specific: z.boolean(), services: z.array(z.looseObject({ code: z.string(), price: z.string() })) },
      readOnly: true,
    },
    async (_args, extra) => {
      const list = await client.services.list({ signal: extra.signal });
      const mode = priceMode;
      return ok({
        price_mode: mode,
        account_specific: list.account_specific,
        services: list.data.map((s) => ({
          code: s.code,
          aliases: s.aliases,
          input: s.input,
          realtime: s.realtime,
          bulk: s.bulk,
          price: s.prices[mode].amount,
          currency: "USD",
          countries: s.countries,
          description: s.description,
          attributes: s.attributes.map((a) => a.name),
        })),
      });
    },
  );

  return server;
}

function assessEstimate(e: { max_cost: { amount: string }; numbers: { total: number }; emails: { total: number }; checks_total: number; livemode: boolean }): Assessment {
  return { maxCostMicros: parseAmount(e.max_cost.amount) ?? 0n, numbers: e.numbers.total, emails: e.emails.total, checksTotal: e.checks_total, livemode: e.livemode };
}

function leftOf(limit: string, used: string): string {
  const l = parseAmount(limit) ?? 0n;
  const u = parseAmount(used) ?? 0n;
  return formatAmount(l > u ? l - u : 0n);
}
