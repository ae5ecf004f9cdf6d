import { createHash, createHmac, createSecretKey } from "node:crypto";
import type { PreparedRow } from "./rows";

export const CONSECUTIVE_NUMBERS_LIMIT = 20;
export const SAME_FAMILY_EMAILS_LIMIT = 20;
export const DAILY_FAMILY_EMAILS_LIMIT = 50;

/**
 * True when the request holds 20 or more consecutive numbers (e.g. …0100 to …0119),
 * whatever their order in the request: the shape of someone walking a range.
 */
export function hasConsecutiveRun(rows: readonly PreparedRow[], limit = CONSECUTIVE_NUMBERS_LIMIT): boolean {
  const values = [
    ...new Set(rows.filter((r) => r.kind === "number" && r.e164 !== null).map((r) => Number((r.e164 as string).slice(1)))),
  ].sort((a, b) => a - b);
  let run = 1;
  for (let i = 1; i < values.length; i += 1) {
    run = (values[i] as number) === (values[i - 1] as number) + 1 ? run + 1 : 1;
    if (run >= limit) return true;
  }
  return values.length > 0 && limit <= 1;
}

/** Turns text that names an address into a short digest. */
export type Digest = (text: string) => string;

const sha256Digest: Digest = (text) => createHash("sha256").update(text).digest("base64url").slice(0, 22);

/**
 * A digest keyed with a server secret, for digests that are stored (Redis): an
 * unkeyed one can be reversed with a list of likely addresses.
 */
export function keyedDigest(secret: string): Digest {
  const key = createSecretKey(Buffer.from(`enum:${secret}`));
  return (text) => createHmac("sha256", key).update(text).digest("base64url").slice(0, 22);
}

/**
 * An address family: same domain and same local part once digits and separators
 * are removed (`john.1@x`, `john-2@x` and `john3@x` are one family). Returned as a
 * digest so families can be counted without holding any address.
 */
export function emailFamily(email: string, digest: Digest = sha256Digest): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at).toLowerCase().replace(/[\d.\-_+]/g, "");
  const domain = email.slice(at + 1).toLowerCase();
  return digest(`${local}@${domain}`);
}

export function addressDigest(email: string, digest: Digest = sha256Digest): string {
  return digest(email.toLowerCase());
}

/** Families in this request with their distinct addresses (digests). */
export function emailFamilies(rows: readonly PreparedRow[], digest: Digest = sha256Digest): Map<string, Set<string>> {
  const families = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.kind !== "email" || r.email === null) continue;
    const family = emailFamily(r.email, digest);
    let members = families.get(family);
    if (!members) families.set(family, (members = new Set()));
    members.add(addressDigest(r.email, digest));
  }
  return families;
}

/** 20 or more addresses on one domain differing only by digits or separators (families from `emailFamilies`). */
export function hasLargeEmailFamily(families: ReadonlyMap<string, ReadonlySet<string>>, limit = SAME_FAMILY_EMAILS_LIMIT): boolean {
  for (const members of families.values()) if (members.size >= limit) return true;
  return false;
}
