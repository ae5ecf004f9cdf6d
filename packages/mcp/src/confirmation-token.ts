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
 * - `expires` is when it lapses (Unix ms), `nonce` makes it single-use;
 * - `mac` is an HMAC-SHA256 over all of it with a key drawn at random when the
 *   process starts and never written anywhere: tokens cannot be forged or altered,
 *   and are checked without storing the arguments. A restarted server no longer
 *   accepts the tokens of the previous one (they are answered `invalid_token`).
 *
 * The only state is the set of nonces already used, in memory, each kept until its
 * token would have expired anyway (so the set stays as small as the recent traffic).
 */

const VERSION = "cfm1";
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;

export type TokenProblem = "invalid_token" | "expired" | "arguments_changed" | "already_used";

/** A token that verified: what it quoted, and what to spend to use it. */
export interface Ticket {
  tool: string;
  quoteMicros: bigint;
  expiresAt: number;
  nonce: string;
}

export type TokenCheck = { ok: true; ticket: Ticket } | { ok: false; problem: TokenProblem };

/**
 * Arguments as a stable string: object keys sorted, `undefined` dropped, arrays in
 * their order (the order of a list is part of what was asked: it numbers the rows).
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export class ConfirmationBook {
  readonly ttlMs: number;
  readonly #key: Buffer;
  readonly #now: () => number;
  /** nonce → when its token expires: used tokens, forgotten once they could not be used anyway. */
  readonly #used = new Map<string, number>();

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
   * and these arguments, not used yet. Spends nothing: `spend` does, once the call
   * is about to be sent.
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
    if (this.#used.has(nonce)) return { ok: false, problem: "already_used" };
    return { ok: true, ticket: { tool, quoteMicros: BigInt(quote), expiresAt, nonce } };
  }

  /**
   * Marks the ticket used. False when it already was (two calls raced with one token)
   * or has expired meanwhile: only the first call that gets here goes ahead. Runs
   * without awaiting anything, so check-and-mark cannot interleave.
   */
  spend(ticket: Ticket): boolean {
    const now = this.#now();
    for (const [nonce, expiresAt] of this.#used) if (expiresAt <= now) this.#used.delete(nonce);
    if (now >= ticket.expiresAt || this.#used.has(ticket.nonce)) return false;
    this.#used.set(ticket.nonce, ticket.expiresAt);
    return true;
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
