import { createHash } from "node:crypto";
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

/**
 * An address family: same domain and same local part once digits and separators
 * are removed (`john.1@x`, `john-2@x` and `john3@x` are one family). Returned as a
 * hash so families can be counted in Redis without storing any address.
 */
export function emailFamily(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at).toLowerCase().replace(/[\d.\-_+]/g, "");
  const domain = email.slice(at + 1).toLowerCase();
  return createHash("sha256").update(`${local}@${domain}`).digest("base64url").slice(0, 22);
}

export function addressDigest(email: string): string {
  return createHash("sha256").update(email.toLowerCase()).digest("base64url").slice(0, 22);
}

/** Families in this request with their distinct addresses (digests). */
export function emailFamilies(rows: readonly PreparedRow[]): Map<string, Set<string>> {
  const families = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.kind !== "email" || r.email === null) continue;
    const family = emailFamily(r.email);
    let members = families.get(family);
    if (!members) families.set(family, (members = new Set()));
    members.add(addressDigest(r.email));
  }
  return families;
}

/** 20 or more addresses on one domain differing only by digits or separators. */
export function hasLargeEmailFamily(rows: readonly PreparedRow[], limit = SAME_FAMILY_EMAILS_LIMIT): boolean {
  for (const members of emailFamilies(rows).values()) if (members.size >= limit) return true;
  return false;
}
