import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Who wrote a message: the fleet's own key. Redis is shared infrastructure (its
 * operators, its replicas, anything that learns its password), so nothing a
 * service reads from it is acted on unless it was written with FLEET_MESSAGE_KEY,
 * which only the fleet's processes hold (docs/security.md, "Internal messages"):
 *
 * - queue messages carry an HMAC-SHA256 tag over queue, job name and data; a
 *   consumer refuses a message whose tag does not verify;
 * - completion notices are sealed with AES-256-GCM (they may carry a lookup's
 *   answers, customer data a subscriber must not read), bound to their channel
 *   and routing tag, and stamped with the time they were sealed;
 * - notices go to a channel named after the key's fingerprint and are routed by a
 *   keyed tag of the id, so fleets sharing a Redis server never hear each other,
 *   and a subscriber learns neither which lookup completed nor its answer.
 *
 * Rotation: FLEET_MESSAGE_KEY signs and seals; FLEET_MESSAGE_KEY_ACCEPT, when
 * set, is also accepted (messages and notices), so a new key is rolled out
 * first as the accepted one, then as the signing one (docs/security.md).
 */
export class FleetKeys {
  private readonly keys: DerivedKey[];

  constructor(primary: string, accepted?: string) {
    if (primary.length < 32) throw new Error("FLEET_MESSAGE_KEY must be at least 32 characters");
    this.keys = [derive(primary)];
    if (accepted && accepted !== primary) this.keys.push(derive(accepted));
  }

  /** The tag a queue message of `name` on `queue` carries (base64url). */
  signMessage(queue: string, name: string, data: object): string {
    return messageTag(this.keys[0] as DerivedKey, queue, name, data);
  }

  /** True when `tag` was made by an accepted key for exactly this queue, name and data. */
  verifyMessage(queue: string, name: string, data: object, tag: unknown): boolean {
    if (typeof tag !== "string" || tag.length !== TAG_CHARS) return false;
    // Characters outside base64url are skipped by the decoder: such a tag is short, and refused like any other.
    const given = Buffer.from(tag, "base64url");
    if (given.length !== 32) return false;
    // Every accepted key is tried (no early exit): the time taken never says which matched.
    let ok = false;
    for (const key of this.keys) ok = timingSafeEqual(Buffer.from(messageTag(key, queue, name, data), "base64url"), given) || ok;
    return ok;
  }

  /** The notice channels of `prefix`: the signing key's first (publishers use it), then the accepted key's. */
  noticeChannels(prefix: string): string[] {
    return this.keys.map((k) => `${prefix}:completed:${k.fingerprint}`);
  }

  /** The routing tags of `id` under every accepted key, in noticeChannels' order. */
  routeTags(id: string): string[] {
    return this.keys.map((k) => routeTag(k, id));
  }

  /**
   * The notice announcing `id`, for the signing key's channel: its routing tag, a
   * space, then the sealed body (the time and `answer`, if any).
   */
  sealNotice(prefix: string, id: string, answer: string | undefined, now = Date.now()): { channel: string; message: string } {
    const key = this.keys[0] as DerivedKey;
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
  openNotice(channel: string, tag: string, sealed: string, now = Date.now()): { answer?: string } | null {
    const key = this.keys.find((k) => channel.endsWith(`:completed:${k.fingerprint}`));
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
}

/**
 * How old (or how far ahead, for clocks that disagree) a notice may be when opened.
 * A notice is sent the moment its work commits; one this late is a replay.
 */
export const NOTICE_MAX_AGE_MS = 5 * 60_000;

type DerivedKey = { mac: Buffer; seal: Buffer; route: Buffer; fingerprint: string };

const TAG_CHARS = 43; // 32 bytes, base64url without padding
const SALT_BYTES = 16;

/** The AES-256-GCM key of one notice: HMAC-SHA256 of its random salt under the fleet's sealing key. */
function noticeKey(key: DerivedKey, salt: Buffer): Buffer {
  return createHmac("sha256", key.seal).update(salt).digest();
}

/** Separate keys per use (HKDF-SHA256), so no tag of one kind is ever valid as another. */
function derive(secret: string): DerivedKey {
  const part = (info: string) => Buffer.from(hkdfSync("sha256", secret, "svc-fleet-message-key", info, 32));
  return {
    mac: part("queue message tag v1"),
    seal: part("completion notice seal v1"),
    route: part("completion notice route v1"),
    fingerprint: part("channel fingerprint v1").subarray(0, 8).toString("hex"),
  };
}

function messageTag(key: DerivedKey, queue: string, name: string, data: object): string {
  return createHmac("sha256", key.mac).update(`${queue}\n${name}\n${canonicalJson(data)}`).digest("base64url");
}

function routeTag(key: DerivedKey, id: string): string {
  return createHmac("sha256", key.route).update(id).digest().subarray(0, 16).toString("base64url");
}

/**
 * JSON with object keys sorted at every level: the same data always gives the same text
 * (Redis may not keep key order). Otherwise as JSON.stringify: `undefined` is left out
 * of objects and is `null` in arrays.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${Array.from(value, (v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
