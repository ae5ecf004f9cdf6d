/**
 * Report categories: a closed vocabulary of short snake_case codes. Only a code
 * from this list is ever stored, never the text a report came with (a subject,
 * an issue label, a community comment), so no free text reaches the table.
 */
export const CATEGORY_CODES = [
  "robocall",
  "telemarketing",
  "impersonation",
  "fraud",
  "debt_collection",
  "debt_relief",
  "tech_support",
  "warranty",
  "medical",
  "energy",
  "home_security",
  "home_improvement",
  "work_from_home",
  "prize",
  "travel",
  "survey",
  "charity",
  "spoofing",
  "wangiri",
  "junk_fax",
  "other",
] as const;

export type CategoryCode = (typeof CATEGORY_CODES)[number];

const CODES = new Set<string>(CATEGORY_CODES);

/** Labels that say nothing about the call: no category is stored for them. */
const NO_INFORMATION = new Set(["", "-", "n/a", "na", "none", "unknown", "no subject provided", "dropped call or no message", "unwanted calls", "unwanted call"]);

/** Exact labels of the public data sets (FTC DNC subjects, FCC unwanted-call issues), lower-cased, single-spaced. */
const EXACT: Record<string, CategoryCode> = {
  // FTC Do Not Call "Subject"
  "reducing your debt (credit cards, mortgage, student loans)": "debt_relief",
  "debt collection": "debt_collection",
  "calls pretending to be government, businesses, or family and friends": "impersonation",
  imposters: "impersonation",
  "medical & prescriptions": "medical",
  "home security & alarms": "home_security",
  "computer & technical support": "tech_support",
  "energy, solar, & utilities": "energy",
  "energy, solar & utilities": "energy",
  "home improvement & cleaning": "home_improvement",
  "work from home & other ways to make money": "work_from_home",
  "warranties & protection plans": "warranty",
  "lotteries, prizes & sweepstakes": "prize",
  "lotteries, prizes, & sweepstakes": "prize",
  "vacation & timeshares": "travel",
  "surveys & political calls": "survey",
  charities: "charity",
  other: "other",
  // FCC consumer complaints, unwanted calls "Issue"
  robocalls: "robocall",
  "telemarketing (including do not call and spoofing)": "telemarketing",
  "do not call": "telemarketing",
  "caller id spoofing": "spoofing",
  "junk faxes": "junk_fax",
};

/** Free text (community and regulator files), first match wins. */
const KEYWORDS: Array<[RegExp, CategoryCode]> = [
  [/imperson|pretend|impost|government|\birs\b|social security|enkeltrick|polizei/, "impersonation"],
  [/debt collect|inkasso/, "debt_collection"],
  [/debt|loan|credit card|mortgage|kredit/, "debt_relief"],
  [/wangiri|\bping\b|ping-?anruf|one[- ]?ring|lockanruf/, "wangiri"],
  [/spoof/, "spoofing"],
  [/robo|pre-?recorded|recorded message|automated|artificial voice|bandansage/, "robocall"],
  [/fax/, "junk_fax"],
  [/tech(nical)? support|computer|microsoft/, "tech_support"],
  [/warrant|protection plan/, "warranty"],
  [/lotter|prize|sweepstake|gewinn/, "prize"],
  [/vacation|timeshare|travel|cruise/, "travel"],
  [/medic|prescription|health/, "medical"],
  [/energy|solar|utilit|strom/, "energy"],
  [/alarm|home security/, "home_security"],
  [/home improvement|cleaning|roof/, "home_improvement"],
  [/work from home|make money|job offer/, "work_from_home"],
  [/survey|poll|political|umfrage/, "survey"],
  [/charit|donation|spende/, "charity"],
  [/telemarket|do not call|\bdnc\b|sales|marketing|werbe|cold call/, "telemarketing"],
  [/fraud|scam|phish|betrug|abzocke|missbrauch|abuse/, "fraud"],
];

/** Lower case, `&amp;` decoded, whitespace squeezed: how labels are compared. */
function canonical(text: string): string {
  return text.replace(/&amp;/gi, "&").replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * A category code for a report's label, or null when the label carries no
 * information (blank, "Unknown", "No Subject Provided", "Unwanted Calls").
 * A code given as such (`debt_collection`, `Debt-Collection`) is kept; known
 * labels map exactly; other text is matched by keywords; the rest is `other`.
 */
export function normaliseCategory(label: string | undefined): CategoryCode | null {
  const text = canonical(label ?? "");
  if (NO_INFORMATION.has(text)) return null;
  const code = text.replace(/[\s-]+/g, "_");
  if (CODES.has(code)) return code as CategoryCode;
  const exact = EXACT[text];
  if (exact) return exact;
  for (const [pattern, category] of KEYWORDS) if (pattern.test(text)) return category;
  return "other";
}

/**
 * A call flagged as a recorded message (FTC `Recorded_Message_Or_Robocall` = Y,
 * FCC "Prerecorded Voice") is a `robocall` unless its label names something
 * more specific.
 */
export function withRobocallFlag(category: CategoryCode | null, robocall: boolean): CategoryCode | null {
  return robocall && (category === null || category === "other") ? "robocall" : category;
}
