import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/**
 * Who wrote a message: the fleet's own key. Redis is shared infrastructure (its
 * operators, its replicas, anything that learns its password), so nothing a
 * service reads from it is acted on unless it was written with FLEET_MESSAGE_KEY,
 * which only the fleet's processes hold (docs/security.md, "Internal messages"):
 *
 * - queue messages carry an HMAC-SHA256 tag over queue, job name and data; a
 *   consumer refuses a message whose tag does not verify;
 * - completion notices are sealed with AES-256-GCM, sent to a channel named after
 *   the key's fingerprint and routed by a keyed tag of the id (./notices/seal.ts,
 *   with keys derived here: noticeKeysOf).
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
    noticeKeys.set(this, this.keys.map(({ seal, route, fingerprint }) => ({ seal, route, fingerprint })));
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
}

type DerivedKey = { mac: Buffer; seal: Buffer; route: Buffer; fingerprint: string };

/** What completion notices use of a derived key: its sealing and routing keys and its channel fingerprint. */
export type NoticeKey = { seal: Buffer; route: Buffer; fingerprint: string };

const noticeKeys = new WeakMap<FleetKeys, readonly NoticeKey[]>();

/**
 * The notice keys of `keys`, the signing key's first: for ./notices/seal.ts, which
 * seals and opens the notices. Not exported from the package (src/index.ts), so
 * outside it the derived keys stay as private as the message keys.
 */
export function noticeKeysOf(keys: FleetKeys): readonly NoticeKey[] {
  return noticeKeys.get(keys) as readonly NoticeKey[];
}

const TAG_CHARS = 43; // 32 bytes, base64url without padding

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
