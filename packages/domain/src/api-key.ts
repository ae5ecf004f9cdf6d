import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from "node:crypto";
import { crc32 } from "node:zlib";
import { API_KEY_BODY_LENGTH as BODY_LENGTH, API_KEY_CHECKSUM_LENGTH as CHECKSUM_LENGTH, API_KEY_MODES, API_KEY_PATTERN, API_KEY_PREFIX_PATTERN } from "./api-key-pattern";
import { encodeBase62, randomBase62 } from "./base62";

export type KeyMode = (typeof API_KEY_MODES)[number];

const PREFIX: Record<KeyMode, string> = { test: "svc_test_", live: "svc_live_", agent: "svc_agent_" };

/** Marks the published public sandbox key: `svc_test_publicSandbox…`. */
export const SANDBOX_BODY_PREFIX = "publicSandbox";

function checksum(prefixAndBody: string): string {
  return encodeBase62(crc32(prefixAndBody), CHECKSUM_LENGTH);
}

/** A new key: prefix + 30 random base62 characters + CRC32 checksum in base62 (GitHub's token layout). */
export function generateApiKey(mode: KeyMode): string {
  let body = randomBase62(BODY_LENGTH);
  // Never mint a key that could be mistaken for the public sandbox key.
  while (body.startsWith(SANDBOX_BODY_PREFIX)) body = randomBase62(BODY_LENGTH);
  return `${PREFIX[mode]}${body}${checksum(PREFIX[mode] + body)}`;
}

/** Builds a key from a chosen body (used only for the published sandbox key). */
export function apiKeyFromBody(mode: KeyMode, body: string): string {
  if (!/^[0-9A-Za-z]{30}$/.test(body)) throw new Error("key body must be 30 base62 characters");
  return `${PREFIX[mode]}${body}${checksum(PREFIX[mode] + body)}`;
}

export type ParsedApiKey = { mode: KeyMode; looksLikeSandbox: boolean };

/**
 * Checks shape and checksum without any I/O, so mistyped, truncated or invented
 * keys are refused before the database is touched.
 */
export function parseApiKey(candidate: string): ParsedApiKey | null {
  const m = API_KEY_PATTERN.exec(candidate);
  if (!m) return null;
  const mode = m[1] as KeyMode;
  const body = m[2] as string;
  const given = m[3] as string;
  const expected = checksum(PREFIX[mode] + body);
  if (!timingSafeEqual(Buffer.from(given), Buffer.from(expected))) return null;
  return { mode, looksLikeSandbox: mode === "test" && body.startsWith(SANDBOX_BODY_PREFIX) };
}

/** Keyed hash stored instead of the key: HMAC-SHA256 with the server secret. */
const hashKeys = new Map<string, KeyObject>();

export function hashApiKey(secret: string, key: string): Buffer {
  // The secret imported once, not on every request.
  let hmacKey = hashKeys.get(secret);
  if (!hmacKey) hashKeys.set(secret, (hmacKey = createSecretKey(Buffer.from(secret))));
  return createHmac("sha256", hmacKey).update(key).digest();
}

/** Constant-time comparison of two key hashes. */
export function sameKeyHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Safe to show and log: the prefix and the last four characters. */
export function keyHint(key: string): string {
  const m = API_KEY_PREFIX_PATTERN.exec(key);
  return `${m ? m[0] : ""}…${key.slice(-4)}`;
}

/**
 * The published public sandbox key. Anyone may use it: test mode, documented test
 * values only, per-IP limits, no webhooks. Its plaintext is public on purpose.
 */
export const PUBLIC_SANDBOX_KEY = apiKeyFromBody("test", `${SANDBOX_BODY_PREFIX}DemoKey2026v1AbCd`);
