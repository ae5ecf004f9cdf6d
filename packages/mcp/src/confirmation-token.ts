import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Confirmation tokens: what binds a `confirm_max_cost` to the call the user approved.
 *
 * A token is `cfm1.<tool>.<quote>.<expires>.<nonce>.<args>.<mac>`:
 * - `tool` and `args` say what was quoted: the tool name and a keyed digest of its
 *   arguments in canonical form (keys sorted, absent values dropped, the confirmation
 *   fields themselves left out), so a larger list, another check or another key is
 *   another call;
 * - `quote` is the maximum possible cost quoted, in micro-dollars;
 * - `expires` is when it lapses (Unix ms), `nonce` names it in the book of used tokens;
 * - `mac` is an HMAC-SHA256 over all of it with a key drawn at random when the
 *   process starts and never written anywhere: tokens cannot be forged or altered,
 *   and are checked without storing the arguments. A restarted server no longer
 *   accepts the tokens of the previous one (they are answered `invalid_token`).
 *
 * The only state, in memory: the tokens spent, the tokens whose call is running, and
 * for a token whose call went out without a definitive answer, the amount it went out
 * with. Each entry is kept until its token would have expired anyway (so the book
 * stays as small as the recent traffic).
 *
 * A token's life: `check` (genuine, unexpired, these arguments, not spent, not in
 * flight) → `hold` when its call is about to be sent (a second call with it is refused
 * while the first runs) → `spend` once the call has a definitive outcome (done, or
 * refused for good), or `release` when it has none (a retryable error, a lost
 * connection, a timeout): the API may or may not have acted, so the identical repeat
 * must go through, under the same Idempotency-Key, and the API answers it with the
 * first call's result instead of doing it twice. The amount sent is pinned by the
 * first send: a repeat must carry the same `confirm_max_cost`, or it would be another
 * request (another body, another derived key) that the API could carry out again.
 */

const VERSION = "cfm1";
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;

export type TokenProblem = "invalid_token" | "expired" | "arguments_changed" | "already_used" | "in_use" | "amount_changed";

/** A token that verified: what it quoted, and what to hold and spend to use it. */
export interface Ticket {
  tool: string;
  quoteMicros: bigint;
  expiresAt: number;
  nonce: string;
  /** The amount a previous send of this token went out with (its outcome unknown), if any: a repeat must carry the same. */
  sentWithMicros: bigint | null;
}

/** A token held by the one call that is using it. Settled once, by whichever of the two comes first. */
export interface TokenHold {
  readonly ticket: Ticket;
  /** `held` until settled. */
  readonly state: "held" | "spent" | "released";
  /** The call has a definitive outcome (done, or refused for good): the token can never be used again. */
  spend(): void;
  /** The call has no definitive outcome (retryable error, lost connection, timeout): the identical repeat may use the token. */
  release(): void;
}

export type TokenCheck = { ok: true; ticket: Ticket } | { ok: false; problem: TokenProblem };

/**
 * Arguments as a stable string: the JSON text they travel as, with object keys
 * sorted at every level; arrays keep their order (the order of a list is part of what
 * was asked: it numbers the rows).
 *
 * The canonical form of a value is that of its JSON: what `JSON.stringify` cannot
 * write (`undefined`, a function, a symbol) is dropped from an object and becomes
 * `null` in an array (the holes of a sparse array too); a `toJSON` (a Date) is applied
 * and a boxed primitive unboxed first; a bigint throws. On its own, where
 * `JSON.stringify` writes nothing, such a value gives `null`. So
 * `{ numbers: undefined, checks }` (how a tool builds arguments) and `{ checks }` (the
 * same arguments parsed from JSON) give one text, and a token issued for one fits the
 * other. (packages/queues has its own canonical form for message MACs; this package is
 * published and does not import it.)
 */
export function canonicalJson(value: unknown): string {
  return canonical(value) ?? "null";
}

/** What `JSON.stringify` writes for a value, sorted; `undefined` for what it would leave out. */
function canonical(value: unknown): string | undefined {
  let v = typeof (value as { toJSON?: unknown } | null)?.toJSON === "function" ? (value as { toJSON(): unknown }).toJSON() : value;
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined;
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  // Array.from visits the holes of a sparse array (map skips them), as JSON.stringify does.
  if (Array.isArray(v)) return `[${Array.from(v, (item) => canonical(item) ?? "null").join(",")}]`;
  const members: string[] = [];
  for (const key of Object.keys(v).sort(byCodeUnit)) {
    const text = canonical((v as Record<string, unknown>)[key]);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(",")}}`;
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class ConfirmationBook {
  readonly ttlMs: number;
  readonly #key: Buffer;
  readonly #now: () => number;
  /** nonce → when its token expires: spent tokens, forgotten once they could not be used anyway. */
  readonly #used = new Map<string, number>();
  /** Nonces whose call is running now. */
  readonly #inFlight = new Set<string>();
  /** nonce → the amount its last send went out with, and when the token expires: tokens released after a call without a definitive outcome. */
  readonly #sent = new Map<string, { amountMicros: bigint; expiresAt: number }>();

  constructor(options: { ttlMs: number; now?: () => number; key?: Buffer }) {
    this.ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
    this.#key = options.key ?? randomBytes(32);
  }

  /** A token for `tool` with exactly `args` (confirmation fields already removed), quoting `quoteMicros`. */
  issue(tool: string, args: Record<string, unknown>, quoteMicros: bigint): { token: string; expiresAt: number } {
    if (!TOOL_NAME.test(tool)) throw new Error(`not a tool name: ${tool}`);
    const expiresAt = this.#now() + this.ttlMs;
    const nonce = randomBytes(12).toString("base64url");
    const body = [VERSION, tool, quoteMicros.toString(), String(expiresAt), nonce, this.#argsDigest(tool, args)].join(".");
    return { token: `${body}.${this.#mac(body)}`, expiresAt };
  }

  /**
   * Whether `token` confirms this call: genuine, not expired, issued for this tool
   * and these arguments, not spent, no call running with it. Changes nothing: `hold`
   * takes it, once the call is about to be sent.
   */
  check(tool: string, args: Record<string, unknown>, token: string): TokenCheck {
    const parts = token.split(".");
    if (parts.length !== 7) return { ok: false, problem: "invalid_token" };
    const [version, issuedFor, quote, expires, nonce, argsDigest, mac] = parts as [string, string, string, string, string, string, string];
    if (version !== VERSION || !TOOL_NAME.test(issuedFor) || !/^\d{1,20}$/.test(quote) || !/^\d{1,15}$/.test(expires) || !B64URL.test(nonce) || !B64URL.test(argsDigest) || !B64URL.test(mac)) {
      return { ok: false, problem: "invalid_token" };
    }
    const expected = Buffer.from(this.#mac(parts.slice(0, 6).join(".")), "base64url");
    const given = Buffer.from(mac, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, problem: "invalid_token" };
    const expiresAt = Number(expires);
    if (this.#now() >= expiresAt) return { ok: false, problem: "expired" };
    if (issuedFor !== tool || !safeEqual(argsDigest, this.#argsDigest(tool, args))) return { ok: false, problem: "arguments_changed" };
    const busy = this.#busy(nonce);
    if (busy) return { ok: false, problem: busy };
    return { ok: true, ticket: { tool, quoteMicros: BigInt(quote), expiresAt, nonce, sentWithMicros: this.#sent.get(nonce)?.amountMicros ?? null } };
  }

  /**
   * Takes the ticket for the one call about to send `amountMicros` as its `max_cost`:
   * refused when the token was spent or another call holds it (two calls raced with
   * one token: only the first that gets here goes ahead), when it expired meanwhile,
   * or when an earlier send went out with another amount. Runs without awaiting
   * anything, so check-and-take cannot interleave.
   */
  hold(ticket: Ticket, amountMicros: bigint): { ok: true; hold: TokenHold } | { ok: false; problem: TokenProblem; sentWithMicros: bigint | null } {
    const now = this.#now();
    this.#forgetLapsed(now);
    const sentWith = this.#sent.get(ticket.nonce)?.amountMicros ?? null;
    if (now >= ticket.expiresAt) return { ok: false, problem: "expired", sentWithMicros: sentWith };
    const busy = this.#busy(ticket.nonce);
    if (busy) return { ok: false, problem: busy, sentWithMicros: sentWith };
    if (sentWith !== null && sentWith !== amountMicros) return { ok: false, problem: "amount_changed", sentWithMicros: sentWith };
    this.#inFlight.add(ticket.nonce);
    this.#sent.set(ticket.nonce, { amountMicros, expiresAt: ticket.expiresAt });
    let state: TokenHold["state"] = "held";
    const settle = (outcome: "spent" | "released") => {
      if (state !== "held") return;
      state = outcome;
      this.#inFlight.delete(ticket.nonce);
      if (outcome === "released") return;
      this.#sent.delete(ticket.nonce);
      this.#used.set(ticket.nonce, ticket.expiresAt);
    };
    return {
      ok: true,
      hold: {
        ticket,
        get state() {
          return state;
        },
        spend: () => settle("spent"),
        release: () => settle("released"),
      },
    };
  }

  #busy(nonce: string): "already_used" | "in_use" | null {
    if (this.#used.has(nonce)) return "already_used";
    if (this.#inFlight.has(nonce)) return "in_use";
    return null;
  }

  #forgetLapsed(now: number): void {
    for (const [nonce, expiresAt] of this.#used) if (expiresAt <= now) this.#used.delete(nonce);
    for (const [nonce, sent] of this.#sent) if (sent.expiresAt <= now && !this.#inFlight.has(nonce)) this.#sent.delete(nonce);
  }

  #mac(body: string): string {
    return createHmac("sha256", this.#key).update(body).digest("base64url");
  }

  /** Keyed, so the token does not carry a plain hash of the numbers and addresses sent. */
  #argsDigest(tool: string, args: Record<string, unknown>): string {
    return createHmac("sha256", this.#key).update(`args\u0000${tool}\u0000${canonicalJson(args)}`).digest("base64url").slice(0, 32);
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
