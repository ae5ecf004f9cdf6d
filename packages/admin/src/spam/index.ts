import { community } from "./community";
import { fcc } from "./fcc";
import { ftc } from "./ftc";
import { regulator } from "./regulator";
import type { SourceSpec } from "./types";
import { unassigned } from "./unassigned";

/** `--source` values, in the order the usage lists them. */
export const SPAM_SOURCES: Readonly<Record<string, SourceSpec>> = { ftc, fcc, regulator, community, unassigned };

export { runSpamImport } from "./run-import";
export { CATEGORY_CODES, normaliseCategory } from "./categories";
export { isSpamCountry, SPAM_COUNTRIES } from "./numbers";
export type { SourceSpec } from "./types";
