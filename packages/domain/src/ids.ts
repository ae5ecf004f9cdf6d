import { BASE62_ALPHABET, encodeBase62, randomBase62 } from "./base62";

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

const ID_PATTERN = /^[a-z]{2,5}_[0-9A-Za-z]{8,64}$/;

/**
 * Kinds whose rows live in tables partitioned by month (docs/partitioning.md): their
 * ids begin with their creation time, so the id alone names its partition.
 */
const TIME_ORDERED: ReadonlySet<IdKind> = new Set<IdKind>(["lookup", "job", "event"]);

/** A time-ordered id's body: 8 base62 characters of milliseconds since 1970 (good until the year 8878), then 18 random ones (107 bits). */
const TIME_CHARS = 8;
const TIME_ID_BODY = TIME_CHARS + 18;

/**
 * Opaque object ids such as `lkp_…`; clients must not depend on their length or format.
 * Lookup, job and event ids begin with their creation time (`at`, default now) and sort by it.
 */
export function newId(kind: IdKind, length = 22, at: Date = new Date()): string {
  if (TIME_ORDERED.has(kind)) return `${ID_PREFIX[kind]}_${encodeBase62(at.getTime(), TIME_CHARS)}${randomBase62(TIME_ID_BODY - TIME_CHARS)}`;
  return `${ID_PREFIX[kind]}_${randomBase62(length)}`;
}

/** The month of ids that carry none: the legacy partition's. */
export const LEGACY_MONTH = "1970-01-01";

/**
 * The partition month of a lookup, job or event id: the UTC month its time-ordered id was made
 * in, as `YYYY-MM-01`; LEGACY_MONTH for every other id — the random 22-character ids
 * made before partitioning, and anything that is not an id.
 * Never throws: a made-up id finds an empty or missing partition, i.e. nothing.
 */
export function idMonth(id: string): string {
  const body = id.slice(id.indexOf("_") + 1);
  if (body.length !== TIME_ID_BODY || !ID_PATTERN.test(id)) return LEGACY_MONTH;
  let ms = 0;
  for (let i = 0; i < TIME_CHARS; i++) ms = ms * 62 + BASE62_ALPHABET.indexOf(body[i] as string);
  return monthStart(new Date(ms));
}

/** `YYYY-MM-01` of the UTC month `at` falls in. */
export function monthStart(at: Date): string {
  return `${String(at.getUTCFullYear()).padStart(4, "0")}-${String(at.getUTCMonth() + 1).padStart(2, "0")}-01`;
}

/** The first id (in C collation) of `kind` made at `at` or later: ids of a month lie between two of these. */
export function firstIdAt(kind: IdKind, at: Date): string {
  return `${ID_PREFIX[kind]}_${encodeBase62(at.getTime(), TIME_CHARS)}`;
}

/** Shaped like one of our ids, of any kind. */
export function looksLikeId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** True when `value` looks like an id of `kind` (cheap guard before touching the database). */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${ID_PREFIX[kind]}_`);
}
