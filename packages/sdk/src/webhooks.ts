import { EVENT_PAYLOADS, EVENT_TYPES } from "./contract";
import { shapes } from "./transport";
import type { KnownEventType, KnownWebhookEvent, WebhookEvent } from "./types";

/**
 * Verifying deliveries (Standard Webhooks): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<raw body>` with the base64-decoded part of the
 * `whsec_` secret, any of several space-separated `v1,<base64>` signatures, a
 * timestamp within the tolerance of this machine's clock, compared in constant time.
 * Web Crypto only (`crypto.subtle`), so it runs on Node 20+, Bun, Deno, browsers and edge runtimes.
 */

/** Why a delivery was refused, for logs and for telling a sender what to fix. */
export type WebhookVerificationReason =
  | "missing_header"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "no_valid_signature"
  | "invalid_secret"
  | "invalid_body";

export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** Request headers as Fetch `Headers`, Node's `req.headers`, or a plain object (any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** The raw bytes of the body, exactly as received (not a parsed object). */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

export interface VerifyOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The receiver's clock (for tests). Default: now. */
  now?: Date | number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Verifies a delivery and returns its event. Known event types are checked against
 * the documented payloads; unknown types are returned untouched (answer them 2xx
 * and ignore them). Throws `WebhookVerificationError` with a `reason` otherwise.
 */
export async function verify(rawBody: WebhookBody, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent> {
  const bytes = bodyBytes(rawBody);
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing_header", "The webhook-id, webhook-timestamp and webhook-signature headers are required.");
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError("invalid_timestamp", "webhook-timestamp is not a Unix time in seconds.");
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime()) / 1000);
  const sentAt = Number(timestamp);
  if (sentAt < nowSeconds - tolerance) throw new WebhookVerificationError("timestamp_too_old", `The delivery is more than ${tolerance} s old.`);
  if (sentAt > nowSeconds + tolerance) throw new WebhookVerificationError("timestamp_too_new", `The delivery is timestamped more than ${tolerance} s in the future.`);

  const expected = await hmac(secret, id, timestamp, bytes);
  let matched = false;
  for (const entry of signatures.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const given = base64ToBytes(entry.slice(comma + 1));
    // Check every entry, and each in constant time, so timing tells nothing.
    if (given && constantTimeEqual(given, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError("no_valid_signature", "No v1 signature matches the body with this secret.");
  return parseEvent(bytes);
}

/**
 * Signs a payload as the API does: the three headers to send with it. For testing
 * receivers (the API signs real deliveries).
 */
export async function sign(payload: WebhookBody, secret: string, options: { id: string; timestamp?: Date | number }): Promise<{ "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string }> {
  const ts = options.timestamp === undefined ? Date.now() : typeof options.timestamp === "number" ? options.timestamp : options.timestamp.getTime();
  const timestamp = String(Math.floor(ts / 1000));
  const mac = await hmac(secret, options.id, timestamp, bodyBytes(payload));
  return { "webhook-id": options.id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${bytesToBase64(mac)}` };
}

/** Narrows an event to one known type: `if (isEventType(event, "job.completed")) event.data.results_url`. */
export function isEventType<K extends KnownEventType>(event: WebhookEvent, type: K): event is Extract<KnownWebhookEvent, { type: K }> {
  return event.type === type;
}

/** True for event types this SDK documents; the others should be answered 2xx and ignored. */
export function isKnownEvent(event: WebhookEvent): event is KnownWebhookEvent {
  return (EVENT_TYPES as readonly string[]).includes(event.type);
}

function parseEvent(bytes: Uint8Array): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new WebhookVerificationError("invalid_body", "The signed body is not JSON.");
  }
  const e = event as Record<string, unknown>;
  if (!e || typeof e !== "object" || typeof e.type !== "string" || typeof e.id !== "string" || typeof e.created_at !== "string" || !e.data || typeof e.data !== "object") {
    throw new WebhookVerificationError("invalid_body", "The signed body is not an event envelope {type, id, created_at, data}.");
  }
  const schema = (EVENT_PAYLOADS as Record<string, unknown>)[e.type];
  if (schema) {
    const bad = shapes.check(schema, e);
    if (bad !== null) throw new WebhookVerificationError("invalid_body", `The ${e.type} event does not have the documented shape (at ${bad}).`);
  }
  return e as WebhookEvent;
}

async function hmac(secret: string, id: string, timestamp: string, body: Uint8Array): Promise<Uint8Array> {
  const raw = typeof secret === "string" ? (secret.startsWith("whsec_") ? secret.slice(6) : secret) : "";
  const keyBytes = base64ToBytes(raw);
  if (!keyBytes || keyBytes.length === 0) throw new WebhookVerificationError("invalid_secret", "The signing secret is not a whsec_<base64> value.");
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new WebhookVerificationError("invalid_secret", "This runtime has no Web Crypto (crypto.subtle).");
  const key = await subtle.importKey("raw", keyBytes as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const data = new Uint8Array(prefix.length + body.length);
  data.set(prefix, 0);
  data.set(body, prefix.length);
  return new Uint8Array(await subtle.sign("HMAC", key, data as BufferSource));
}

function bodyBytes(body: WebhookBody): Uint8Array {
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new WebhookVerificationError("invalid_body", "Pass the raw body (string or bytes) as received, not a parsed object: the signature covers the exact bytes.");
}

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers)?.get === "function") return (headers as Headers).get(name);
  if (!headers || typeof headers !== "object") return null;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== name) continue;
    if (Array.isArray(v)) return v.join(" ");
    return typeof v === "string" ? v : null;
  }
  return null;
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false; // lengths are public (32 bytes)
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

function base64ToBytes(text: string): Uint8Array | null {
  try {
    const bin = atob(text.trim());
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

function bytesToBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The helpers as one object, also reachable as `client.webhooks`. */
export const webhooks = { verify, sign, isEventType, isKnownEvent } as const;
