import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { DEFAULT_TOLERANCE_SECONDS, SUBSCRIBABLE_EVENTS, verifyWebhook, WebhookVerificationError, type WebhookEndpointUpdateParams, type WebhookEvent } from "@svc/sdk";
import { client, globals } from "../context";
import { EXIT, UsageError } from "../exit-codes";
import { webhooksTable, webhookText } from "../format";
import { collect, positiveInt, readStdin } from "../input";
import { addSecret, err, json, out } from "../output";
import { parseHeadersFile, parseRequestFile, type SavedRequest } from "../saved-request";

/** The environment variable `webhooks verify` reads the signing secret from. */
export const WEBHOOK_SECRET_ENV = "SVC_WEBHOOK_SECRET";

const events = (values: string[] | undefined): string[] | undefined => {
  if (!values) return undefined;
  const list = values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new UsageError(`--events needs at least one of: ${SUBSCRIBABLE_EVENTS.join(", ")}.`);
  return list;
};

export function webhooksCommand(): Command {
  const webhooks = new Command("webhooks")
    .summary("webhook endpoints, and verifying a delivery")
    .description("Webhook endpoints of the key's mode (the key needs the webhooks:manage scope), and `verify` to check a saved delivery's signature.");

  webhooks
    .command("list")
    .summary("list the endpoints of the key's mode")
    .action(async (_opts: unknown, cmd: Command) => {
      const list = await client(cmd).webhookEndpoints.list();
      if (globals(cmd).json) json(list);
      else out(webhooksTable(list.data));
    });

  webhooks
    .command("create")
    .summary("add an endpoint (the signing secret is shown once)")
    .description(
      "Adds an https:// endpoint. It starts `pending_verification`: a webhook.verification event is sent to it,\n" +
        "and any 2xx answer verifies it. The signing secret (whsec_…) is in this output only: store it.",
    )
    .requiredOption("--url <url>", "https:// URL resolving to a public address")
    .requiredOption("--events <types>", `events to subscribe to, comma-separated or repeated: ${SUBSCRIBABLE_EVENTS.join(", ")}`, collect)
    .addHelpText("after", "\nExample:\n  svc webhooks create --url https://example.com/hooks --events job.completed,lookup.completed")
    .action(async (opts: { url: string; events: string[] }, cmd: Command) => {
      const made = await client(cmd).webhookEndpoints.create({ url: opts.url, events: events(opts.events) ?? [] });
      if (globals(cmd).json) return json(made);
      out(webhookText(made));
      err("The signing secret is shown only once: store it now (svc webhooks verify reads it from SVC_WEBHOOK_SECRET).");
    });

  webhooks
    .command("update")
    .summary("change an endpoint's URL or events")
    .description("Changes the URL and/or the events. A new URL is verified again before events flow to it.")
    .argument("<id>", "endpoint id (we_…)")
    .option("--url <url>", "new https:// URL")
    .option("--events <types>", "new event list, comma-separated or repeated", collect)
    .action(async (id: string, opts: { url?: string; events?: string[] }, cmd: Command) => {
      const params: WebhookEndpointUpdateParams = {};
      if (opts.url !== undefined) params.url = opts.url;
      const ev = events(opts.events);
      if (ev) params.events = ev;
      if (Object.keys(params).length === 0) throw new UsageError("Nothing to change: give --url and/or --events.");
      const updated = await client(cmd).webhookEndpoints.update(id, params);
      if (globals(cmd).json) json(updated);
      else out(webhookText(updated));
    });

  webhooks
    .command("delete")
    .summary("delete an endpoint (nothing is delivered to it afterwards)")
    .argument("<id>", "endpoint id (we_…)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await client(cmd).webhookEndpoints.delete(id);
      // The API answers 204 without a body; --json says what happened in the usual shape.
      if (globals(cmd).json) json({ id, object: "webhook_endpoint", deleted: true });
      else out(`Deleted ${id}.`);
    });

  webhooks
    .command("test")
    .summary("send a signed webhook.test event to an endpoint")
    .description("Queues a signed webhook.test event to the endpoint; it is delivered even before the endpoint is verified.")
    .argument("<id>", "endpoint id (we_…)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const queued = await client(cmd).webhookEndpoints.test(id);
      if (globals(cmd).json) json(queued);
      else out(`Queued ${queued.type} event ${queued.id} for ${id}.`);
    });

  webhooks
    .command("verify")
    .summary("check a saved delivery's signature: valid, or why not")
    .description(
      "Verifies a webhook delivery you saved (Standard Webhooks: HMAC-SHA256 over id.timestamp.body,\n" +
        `and a timestamp within ${DEFAULT_TOLERANCE_SECONDS} s of this machine's clock). Exits 0 when valid, 1 when not, with the reason.`,
    )
    .argument("[request-file]", "saved HTTP request, or - for stdin")
    .option("--headers <file>", "headers file (with --body)")
    .option("--body <file>", "raw body file (with --headers)")
    .option("--secret-file <file>", "file holding the endpoint's whsec_ secret")
    .option("--secret <whsec>", `the secret itself (prefer --secret-file or ${WEBHOOK_SECRET_ENV})`)
    .addOption(new Option("--tolerance <seconds>", "largest accepted age (or clock skew) of webhook-timestamp").argParser(positiveInt("--tolerance", 10 * 365 * 86_400, 0)).default(DEFAULT_TOLERANCE_SECONDS))
    .addHelpText(
      "after",
      `
Input, either:
  [request-file]          the request as received: an optional request line,
                          "Name: value" headers, a blank line, then the raw body
                          byte for byte (Content-Length, if present, says where
                          it ends); \`-\` or nothing reads it from stdin
  --headers F --body F    the headers ("Name: value" lines, or a JSON object)
                          and the raw body, apart

The secret (whsec_...): --secret-file, else the ${WEBHOOK_SECRET_ENV} environment
variable, else --secret (an argument shows in the process list). Never printed.

Examples:
  export ${WEBHOOK_SECRET_ENV}=whsec_...        # from \`svc webhooks create\`
  svc webhooks verify request.txt
  svc webhooks verify --headers headers.json --body body.bin --secret-file secret.txt`,
    )
    .action(async (file: string | undefined, opts: { headers?: string; body?: string; secretFile?: string; secret?: string; tolerance: number }, cmd: Command) => {
      const secret = readSecret(opts);
      const request = await readRequest(file, opts);
      const result = await check(request, secret, opts.tolerance);
      if (globals(cmd).json) json(result);
      else out(result.valid ? `valid: ${result.event.type} ${result.event.id}, signed ${result.age_seconds} s ago` : `not valid: ${result.reason}: ${result.message}`);
      process.exitCode = result.valid ? EXIT.ok : EXIT.negative;
    });

  return webhooks;
}

function readSecret(opts: { secretFile?: string; secret?: string }): string {
  let secret: string | undefined;
  if (opts.secretFile) secret = readText(opts.secretFile).trim();
  else if (process.env[WEBHOOK_SECRET_ENV]?.trim()) secret = process.env[WEBHOOK_SECRET_ENV]?.trim();
  else secret = opts.secret?.trim();
  if (!secret) throw new UsageError(`No signing secret: use --secret-file FILE or set ${WEBHOOK_SECRET_ENV} (the whsec_… value shown when the endpoint was created).`);
  addSecret(secret);
  if (!/^whsec_[A-Za-z0-9+/]+=*$/.test(secret)) throw new UsageError("The signing secret is not a whsec_<base64> value.");
  return secret;
}

function readText(path: string): string {
  return readBytes(path).toString("utf8");
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new UsageError(`Cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"}).`);
  }
}

async function readRequest(file: string | undefined, opts: { headers?: string; body?: string }): Promise<SavedRequest> {
  if (opts.headers || opts.body) {
    if (!opts.headers || !opts.body) throw new UsageError("--headers and --body go together.");
    if (file) throw new UsageError("Give either a request file or --headers and --body, not both.");
    return { headers: parseHeadersFile(readBytes(opts.headers), opts.headers), body: readBytes(opts.body) };
  }
  if (!file || file === "-") {
    if (process.stdin.isTTY) throw new UsageError("No request: give a saved request file, --headers and --body, or pipe the request in.");
    return parseRequestFile(await readStdin(), "stdin");
  }
  return parseRequestFile(readBytes(file), file);
}

type Verdict =
  | { valid: true; event: WebhookEvent; webhook_id: string; age_seconds: number }
  | { valid: false; reason: string; message: string; signature_matches: boolean | null; webhook_id: string | null };

/**
 * The SDK's verify, plus what a person debugging a delivery wants next: for a
 * stale or future timestamp, whether the signature itself is right; for a
 * mismatch, whether the saved file added a final newline to the body.
 */
async function check(req: SavedRequest, secret: string, tolerance: number): Promise<Verdict> {
  const id = req.headers["webhook-id"] ?? null;
  const ts = Number(req.headers["webhook-timestamp"]);
  try {
    const event = await verifyWebhook(req.body, req.headers, secret, { toleranceSeconds: tolerance });
    return { valid: true, event, webhook_id: id ?? "", age_seconds: Math.round(Date.now() / 1000 - ts) };
  } catch (e) {
    if (!(e instanceof WebhookVerificationError)) throw e;
    if (e.reason === "invalid_secret") throw new UsageError(e.message);
    let signatureMatches: boolean | null = null;
    let message = e.message;
    if (e.reason === "timestamp_too_old" || e.reason === "timestamp_too_new") {
      signatureMatches = await matches(req.body, req.headers, secret, ts * 1000);
      const age = Math.round(Date.now() / 1000 - ts);
      message += ` (${e.reason === "timestamp_too_old" ? `sent ${age} s ago` : `${-age} s ahead of this clock`}, tolerance ${tolerance} s). ${signatureMatches ? "The signature itself matches this secret: a replayed or stale delivery." : "The signature does not match this secret either."}`;
    } else if (e.reason === "no_valid_signature") {
      signatureMatches = false;
      const body = req.body;
      if (body.length > 0 && body[body.length - 1] === 0x0a && req.headers["content-length"] === undefined) {
        const trimmed = body.subarray(0, body[body.length - 2] === 0x0d ? body.length - 2 : body.length - 1);
        if (await matches(trimmed, req.headers, secret, Date.now())) message += " It would match without the body's final line break: the saved file adds one (keep the Content-Length header, or save the body exactly).";
      }
    }
    return { valid: false, reason: e.reason, message, signature_matches: signatureMatches, webhook_id: id };
  }
}

async function matches(body: Buffer, headers: Record<string, string>, secret: string, nowMs: number): Promise<boolean> {
  try {
    await verifyWebhook(body, headers, secret, { now: nowMs });
    return true;
  } catch (e) {
    // Only a signature mismatch means "does not match"; a body that is not an event still had a valid signature.
    return e instanceof WebhookVerificationError && e.reason !== "no_valid_signature" && e.reason !== "timestamp_too_old" && e.reason !== "timestamp_too_new";
  }
}
