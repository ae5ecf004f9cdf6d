import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { noticeKeysOf, type FleetKeys, type NoticeKey } from "../fleet-keys";

/**
 * Sealing completion notices with the fleet's key (FleetKeys, which derives the keys
 * from FLEET_MESSAGE_KEY; docs/security.md, "Internal messages"):
 *
 * - a notice is sealed with AES-256-GCM (it may carry a lookup's answers, customer
 *   data a subscriber must not read), bound to its channel and routing tag, and
 *   stamped with the time it was sealed;
 * - notices go to a channel named after the key's fingerprint and are routed by a
 *   keyed tag of the id, so fleets sharing a Redis server never hear each other,
 *   and a subscriber learns neither which lookup completed nor its answer.
 *
 * Rotation: the signing key seals; an accepted key (FLEET_MESSAGE_KEY_ACCEPT) is also
 * listened on and opened with, so a new key is rolled out first as the accepted one.
 */

/**
 * How old (or how far ahead, for clocks that disagree) a notice may be when opened.
 * A notice is sent the moment its work commits; one this late is a replay.
 */
export const NOTICE_MAX_AGE_MS = 5 * 60_000;

const SALT_BYTES = 16;

/** The notice channels of `prefix`: the signing key's first (publishers use it), then the accepted key's. */
export function noticeChannels(keys: FleetKeys, prefix: string): string[] {
  return noticeKeysOf(keys).map((k) => `${prefix}:completed:${k.fingerprint}`);
}

/** The routing tags of `id` under every accepted key, in noticeChannels' order. */
export function routeTags(keys: FleetKeys, id: string): string[] {
  return noticeKeysOf(keys).map((k) => routeTag(k, id));
}

/**
 * The notice announcing `id`, for the signing key's channel: its routing tag, a
 * space, then the sealed body (the time and `answer`, if any).
 */
export function sealNotice(keys: FleetKeys, prefix: string, id: string, answer: string | undefined, now = Date.now()): { channel: string; message: string } {
  const key = noticeKeysOf(keys)[0] as NoticeKey;
  const channel = `${prefix}:completed:${key.fingerprint}`;
  const tag = routeTag(key, id);
  // A key of its own per notice (from a random salt), so the random GCM nonces of a
  // long-lived fleet key never come near their collision bound however many notices it seals.
  const salt = randomBytes(SALT_BYTES);
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", noticeKey(key, salt), nonce);
  cipher.setAAD(Buffer.from(`${channel} ${tag}`));
  const body = Buffer.concat([salt, nonce, cipher.update(JSON.stringify(answer === undefined ? { t: now } : { t: now, a: answer })), cipher.final(), cipher.getAuthTag()]);
  return { channel, message: `${tag} ${body.toString("base64url")}` };
}

/**
 * Opens a notice received on `channel` (one of noticeChannels). Null when it was
 * not sealed by that channel's key for that tag, or is older than NOTICE_MAX_AGE_MS
 * (or as far in the future): such a notice is dropped as if never sent.
 */
export function openNotice(keys: FleetKeys, channel: string, tag: string, sealed: string, now = Date.now()): { answer?: string } | null {
  const key = noticeKeysOf(keys).find((k) => channel.endsWith(`:completed:${k.fingerprint}`));
  if (!key) return null;
  const body = Buffer.from(sealed, "base64url");
  const head = SALT_BYTES + 12;
  if (body.length < head + 16 + 2) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", noticeKey(key, body.subarray(0, SALT_BYTES)), body.subarray(SALT_BYTES, head));
    decipher.setAAD(Buffer.from(`${channel} ${tag}`));
    decipher.setAuthTag(body.subarray(body.length - 16));
    const plain = Buffer.concat([decipher.update(body.subarray(head, body.length - 16)), decipher.final()]).toString();
    const value = JSON.parse(plain) as { t?: unknown; a?: unknown };
    if (typeof value.t !== "number" || Math.abs(now - value.t) > NOTICE_MAX_AGE_MS) return null;
    return typeof value.a === "string" ? { answer: value.a } : {};
  } catch {
    return null;
  }
}

/** The AES-256-GCM key of one notice: HMAC-SHA256 of its random salt under the fleet's sealing key. */
function noticeKey(key: NoticeKey, salt: Buffer): Buffer {
  return createHmac("sha256", key.seal).update(salt).digest();
}

function routeTag(key: NoticeKey, id: string): string {
  return createHmac("sha256", key.route).update(id).digest().subarray(0, 16).toString("base64url");
}
