import { randomBase62 } from "./base62";

export const ID_PREFIX = {
  account: "acct",
  apiKey: "key",
  lookup: "lkp",
  job: "job",
  webhookEndpoint: "we",
  event: "evt",
  request: "req",
  reservation: "rsv",
  ledgerTransaction: "ltx",
  testKeyRequest: "tkr",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** Opaque object ids such as `lkp_…`; clients must not depend on their length or format. */
export function newId(kind: IdKind, length = 22): string {
  return `${ID_PREFIX[kind]}_${randomBase62(length)}`;
}

const ID_PATTERN = /^[a-z]{2,5}_[0-9A-Za-z]{8,64}$/;

/** Shaped like one of our ids, of any kind. */
export function looksLikeId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** True when `value` looks like an id of `kind` (cheap guard before touching the database). */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${ID_PREFIX[kind]}_`);
}
