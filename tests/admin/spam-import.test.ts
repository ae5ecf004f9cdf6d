import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseNumber } from "@svc/domain";
import { createStore, type Store } from "@svc/store";
// The source file itself, not the package index: scoring is what is under test here.
import { ReportStoreSpamSource } from "../../packages/sources/src/spam-reports";
import { CATEGORY_CODES } from "../../packages/admin/src/spam/categories";
import { createTestEnv, type TestEnv } from "../support/env";

const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
const FIXTURES = path.resolve(__dirname, "..", "fixtures", "spam");
const fixture = (name: string) => path.join(FIXTURES, name);

/** Text of the fixtures that must never reach the table or the output: cities, states, zips, subjects, comments. */
const PERSONAL_OR_REPORT_TEXT = [
  "SPRINGFIELD", "Saint Louis", "TALLAHASSEE", "Boise", "Naperville", "Fort Wayne", "Des Moines", "Madison", "Omaha", "Denver",
  "Illinois", "Missouri", "Florida", "Idaho", "Nebraska", "Chicago", "Evanston", "Oak Park", "Arlington", "Peoria", "60601", "41.8858",
  "Reducing your debt", "pretending", "Warranties", "protection plans", "Vacation", "No Subject Provided", "Lotteries",
  "Car warranty", "pressed 1", "sales pitch", "card number", "Microsoft", "Betrug", "Ping-Anruf", "Rufnummernabschaltung", "Werbeanruf",
  "BNetzA", "CRTC", "Prerecorded", "Live Voice", "Wireless",
];

let env: TestEnv;
let store: Store;
let tmp: string;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2, applicationName: "spam-import-test" });
  tmp = mkdtempSync(path.join(tmpdir(), "spam-import-"));
});
afterAll(async () => {
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs the built CLI as an operator would (`npm run admin -- spam import …`). */
function admin(...args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl, KEY_HASH_SECRET: env.keyHashSecret },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, json: () => JSON.parse(res.stdout) as Record<string, unknown> };
}

/** One import that must succeed: exit 0, nothing on stderr (not a TTY: no progress), exactly one JSON object on stdout. */
function importFile(source: string, file: string, ...flags: string[]) {
  const res = admin("spam", "import", "--source", source, "--file", file, ...flags);
  expect(res.stderr).toBe("");
  expect(res.status).toBe(0);
  expect(res.stdout.trim().startsWith("{") && res.stdout.trim().endsWith("}")).toBe(true);
  for (const text of PERSONAL_OR_REPORT_TEXT) expect(res.stdout).not.toContain(text);
  return res.json();
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const count = async (sql: string, values: unknown[] = []) => (await store.pool.query<{ n: number }>(sql, values)).rows[0]?.n;

async function spamAttributes(number: string): Promise<Record<string, unknown>> {
  const parsed = parseNumber(number);
  if (!parsed.valid) throw new Error(`fixture number ${number} is not valid`);
  // Pinned "today": the fixtures are dated 2025-12 to 2026-11, and reports fade with age.
  const source = new ReportStoreSpamSource(store.pool, { today: () => TODAY });
  const answer = await source.lookup(
    { e164: parsed.e164, email: null, domain: null, country: parsed.country, numberType: parsed.numberType },
    new AbortController().signal,
  );
  expect(answer.status).toBe("ok");
  return { registered: answer.registered, ...answer.attributes };
}

/** The day the fixtures were written: scores are as of this day. */
const TODAY = "2026-11-21";
const ONLY_FTC = "+12025550123";
const REGULATOR_DE = "+493023125417";
const REGULATOR_CA = "+14165550142";
const GOVERNMENT_AND_COMMUNITY = "+13125550177";
const UNASSIGNED = "+17185550123";
const NO_REPORTS = "+16135550110";

describe("npm run admin -- spam import", () => {
  it("imports the FTC Do Not Call file (BOM, CRLF, quoted commas), counting every skipped row by reason", async () => {
    const out = importFile("ftc", fixture("ftc-dnc.csv"));
    expect(out).toEqual({
      object: "spam_import",
      id: expect.stringMatching(/^simp_[0-9A-Za-z]{22}$/),
      source: "ftc",
      report_source: "ftc_dnc",
      signal_class: "government",
      file_sha256: sha256(fixture("ftc-dnc.csv")),
      rows_read: 15,
      rows_added: 9,
      rows_duplicate: 1,
      rows_skipped: { total: 5, reasons: { invalid_date: 1, invalid_number: 2, malformed_row: 1, missing_number: 1 } },
      created_at: expect.any(String),
    });
    const { rows } = await store.pool.query(`SELECT source, file_sha256, rows_read, rows_added FROM spam_imports WHERE id = $1`, [out.id]);
    expect(rows).toEqual([{ source: "ftc_dnc", file_sha256: out.file_sha256, rows_read: 15, rows_added: 9 }]);
    const stored = await store.pool.query(
      `SELECT e164, category, to_char(reported_on, 'YYYY-MM-DD') AS day FROM spam_reports WHERE e164 = $1 ORDER BY reported_on`,
      [ONLY_FTC],
    );
    // Violation_Date when given, else Created_Date; "Other" with a recorded message is a robocall.
    expect(stored.rows).toEqual([
      { e164: ONLY_FTC, category: "debt_relief", day: "2026-09-01" },
      { e164: ONLY_FTC, category: "debt_relief", day: "2026-09-15" },
      { e164: ONLY_FTC, category: "robocall", day: "2026-10-03" },
      { e164: ONLY_FTC, category: "impersonation", day: "2026-10-20" },
    ]);
  });

  it("adds nothing when the same file is imported again, and records the second run", async () => {
    const again = importFile("ftc", fixture("ftc-dnc.csv"));
    expect(again).toMatchObject({ rows_read: 15, rows_added: 0, rows_duplicate: 10, rows_skipped: { total: 5 } });
    expect(await count(`SELECT count(*)::int AS n FROM spam_reports WHERE source = 'ftc_dnc'`)).toBe(9);
    const runs = await store.pool.query(`SELECT rows_added FROM spam_imports WHERE source = 'ftc_dnc' ORDER BY created_at`);
    expect(runs.rows).toEqual([{ rows_added: 9 }, { rows_added: 0 }]);
  });

  it("imports the FCC unwanted-calls export: one report per ticket, other complaint issues left out", async () => {
    const out = importFile("fcc", fixture("fcc-unwanted-calls.csv"));
    expect(out).toMatchObject({
      report_source: "fcc_complaints",
      signal_class: "government",
      rows_read: 6,
      rows_added: 3,
      rows_duplicate: 1,
      rows_skipped: { total: 2, reasons: { invalid_number: 1, not_unwanted_call: 1 } },
    });
    const { rows } = await store.pool.query(
      `SELECT category, to_char(reported_on, 'YYYY-MM-DD') AS day FROM spam_reports WHERE source = 'fcc_complaints' ORDER BY reported_on`,
    );
    // "Unwanted Calls" with a prerecorded voice is a robocall; ticket 5123403 is filed under its advertiser number.
    expect(rows).toEqual([
      { category: "robocall", day: "2026-09-02" },
      { category: "robocall", day: "2026-09-18" },
      { category: "telemarketing", day: "2026-10-06" },
    ]);
    expect(importFile("fcc", fixture("fcc-unwanted-calls.csv"))).toMatchObject({ rows_added: 0, rows_duplicate: 4 });
  });

  it("imports regulator actions, taking the country of national numbers from the regulator", async () => {
    const out = importFile("regulator", fixture("regulator-actions.csv"));
    expect(out).toMatchObject({
      report_source: "regulator_actions",
      signal_class: "regulator",
      rows_read: 5,
      rows_added: 2,
      rows_duplicate: 1,
      rows_skipped: { total: 2, reasons: { missing_regulator: 1, unsupported_country: 1 } },
    });
    const { rows } = await store.pool.query(`SELECT e164, category, to_char(reported_on, 'YYYY-MM-DD') AS day FROM spam_reports WHERE signal_class = 'regulator' ORDER BY e164`);
    expect(rows).toEqual([
      { e164: REGULATOR_CA, category: "telemarketing", day: "2026-08-12" },
      { e164: REGULATOR_DE, category: "wangiri", day: "2026-10-15" },
    ]);
  });

  it("reads the same layout as TSV with --format tsv (and dedupes against the CSV import)", () => {
    const tsv = path.join(tmp, "regulator-actions.tsv");
    writeFileSync(tsv, readFileSync(fixture("regulator-actions.csv"), "utf8").replace(/,/g, "\t"));
    expect(importFile("regulator", tsv, "--format", "tsv")).toMatchObject({ rows_read: 5, rows_added: 0, rows_duplicate: 3 });
  });

  it("imports community reports: national numbers need a country column or --country", async () => {
    const out = importFile("community", fixture("community-reports.csv"));
    expect(out).toMatchObject({
      report_source: "community",
      signal_class: "community",
      rows_read: 14,
      rows_added: 10,
      rows_duplicate: 1,
      rows_skipped: { total: 3, reasons: { invalid_date: 1, no_country: 1, unsupported_country: 1 } },
    });
    // With --country DE the German mobile number without a country column is read too.
    expect(importFile("community", fixture("community-reports.csv"), "--country", "DE")).toMatchObject({
      rows_added: 1,
      rows_duplicate: 11,
      rows_skipped: { total: 2, reasons: { invalid_date: 1, unsupported_country: 1 } },
    });
    expect(await count(`SELECT count(*)::int AS n FROM spam_reports WHERE e164 = '+491712345678' AND category = 'telemarketing'`)).toBe(1);
  });

  it("stores only number, class, source, category code and day: no report text, no consumer data", async () => {
    const columns = await store.pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'spam_reports' ORDER BY ordinal_position`,
    );
    expect(columns.rows.map((c) => c.column_name)).toEqual(["id", "e164", "signal_class", "source", "category", "reported_on", "dedupe_key", "import_id"]);
    const { rows } = await store.pool.query<Record<string, unknown>>(`SELECT e164, signal_class, source, category, reported_on::text, dedupe_key, import_id FROM spam_reports`);
    expect(rows.length).toBe(9 + 3 + 2 + 11);
    const imports = new Set((await store.pool.query<{ id: string }>(`SELECT id FROM spam_imports`)).rows.map((r) => r.id));
    for (const r of rows) {
      const parsed = parseNumber(r.e164 as string);
      expect(parsed.valid && ["US", "CA", "DE"].includes(parsed.country ?? "")).toBe(true);
      expect(["government", "regulator", "community", "unassigned"]).toContain(r.signal_class);
      expect(["ftc_dnc", "fcc_complaints", "regulator_actions", "community", "unassigned_offers"]).toContain(r.source);
      if (r.category !== null) expect(CATEGORY_CODES).toContain(r.category);
      expect(r.reported_on).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.dedupe_key).toMatch(new RegExp(`^${r.source}:\\${r.e164}:${r.reported_on}:[0-9a-f]{24}$`));
      expect(imports.has(r.import_id as string)).toBe(true);
    }
    // Everything stored but the random import ids, compared case-insensitively.
    const runs = (await store.pool.query(`SELECT source, file_sha256, rows_read, rows_added FROM spam_imports`)).rows;
    const dump = JSON.stringify(rows.map(({ import_id: _, ...r }) => r)) + JSON.stringify(runs);
    for (const text of PERSONAL_OR_REPORT_TEXT) expect(dump.toLowerCase()).not.toContain(text.toLowerCase());
  });

  it("scores the imported numbers: government alone is never high, a regulator action is", async () => {
    expect(await spamAttributes(ONLY_FTC)).toEqual({
      registered: true,
      risk_level: "low",
      risk_score: 25, // 4 government reports
      reason_regulator: false,
      reason_government: true,
      reason_community: false,
      reason_unassigned: false,
      voip_range: false,
      top_category: "debt_relief",
      first_seen: "2026-09",
      last_seen: "2026-10",
      sources: 1,
    });
    expect(await spamAttributes(REGULATOR_DE)).toMatchObject({
      risk_level: "high",
      risk_score: 87, // regulator 75 + 2 community reports 12
      reason_regulator: true,
      reason_government: false,
      reason_community: true,
      reason_unassigned: false,
      top_category: "wangiri",
      first_seen: "2026-10",
      last_seen: "2026-10",
      sources: 2,
    });
    expect(await spamAttributes(REGULATOR_CA)).toMatchObject({
      risk_level: "high",
      risk_score: 75, // a regulator action alone is enough for high
      reason_regulator: true,
      top_category: "telemarketing",
      first_seen: "2026-08",
      last_seen: "2026-08",
      sources: 1,
    });
    // Two classes allow high, but they make 45: of 8 government reports 5 are over 90 days old and
    // count half (5.5 reports' worth: 27), and likewise of 8 community reports (5.5: 18).
    expect(await spamAttributes(GOVERNMENT_AND_COMMUNITY)).toEqual({
      registered: true,
      risk_level: "medium",
      risk_score: 45,
      reason_regulator: false,
      reason_government: true,
      reason_community: true,
      reason_unassigned: false,
      voip_range: false,
      top_category: "warranty",
      first_seen: "2025-12",
      last_seen: "2026-10",
      sources: 2,
    });
    expect(await spamAttributes(NO_REPORTS)).toEqual({
      registered: false,
      risk_level: "no_reports",
      risk_score: 0,
      reason_regulator: false,
      reason_government: false,
      reason_community: false,
      reason_unassigned: false,
      voip_range: false,
      top_category: null,
      first_seen: null,
      last_seen: null,
      sources: 0,
    });
  });

  it("imports numbers offered as unassigned (no category), adding a third class to the two-class number", async () => {
    const withoutCountry = importFile("unassigned", fixture("unassigned-offers.csv"));
    expect(withoutCountry).toMatchObject({
      report_source: "unassigned_offers",
      signal_class: "unassigned",
      rows_read: 4,
      rows_added: 1,
      rows_skipped: { total: 3, reasons: { invalid_number: 1, no_country: 2 } },
    });
    expect(importFile("unassigned", fixture("unassigned-offers.csv"), "--country", "US")).toMatchObject({
      rows_added: 1,
      rows_duplicate: 2,
      rows_skipped: { total: 1, reasons: { invalid_number: 1 } },
    });
    expect(await spamAttributes(UNASSIGNED)).toEqual({
      registered: true,
      risk_level: "low",
      risk_score: 20,
      reason_regulator: false,
      reason_government: false,
      reason_community: false,
      reason_unassigned: true,
      voip_range: false,
      top_category: null,
      first_seen: "2026-10",
      last_seen: "2026-10",
      sources: 1,
    });
    // A recent offer (19 days old) adds a third class: 27 + 18 + 20 = 65, still medium.
    expect(await spamAttributes(GOVERNMENT_AND_COMMUNITY)).toMatchObject({
      risk_level: "medium",
      risk_score: 65,
      reason_unassigned: true,
      top_category: "warranty",
      first_seen: "2025-12",
      last_seen: "2026-11",
      sources: 3,
    });
  });

  it.each([
    [["spam", "import", "--source", "ftc"], "--file is required"],
    [["spam", "import", "--file", "x.csv"], "--source is required"],
    [["spam", "import", "--source", "myspace", "--file", "x.csv"], 'unknown source "myspace"; sources are ftc, fcc, regulator, community, unassigned'],
    [["spam", "import", "--source", "ftc", "--file", "/no/such/file.csv"], 'cannot read --file "/no/such/file.csv"'],
    [["spam", "import", "--source", "ftc", "--file", "/"], "is not a file"],
    [["spam", "import", "--source", "ftc", "--file", fixture("community-reports.csv")], "wrong header for --source ftc: missing columns Company_Phone_Number"],
    [["spam", "import", "--source", "fcc", "--file", fixture("ftc-dnc.csv")], "wrong header for --source fcc: missing columns Ticket ID, Date of Issue, Issue, Caller ID Number"],
    [["spam", "import", "--source", "unassigned", "--file", fixture("regulator-actions.csv")], "missing column offered_on"],
    [["spam", "import", "--source", "ftc", "--file", fixture("ftc-dnc.csv"), "--format", "xlsx"], "--format must be csv or tsv"],
    [["spam", "import", "--source", "ftc", "--file", fixture("ftc-dnc.csv"), "--country", "DE"], "--country does not apply to --source ftc"],
    [["spam", "import", "--source", "community", "--file", fixture("community-reports.csv"), "--country", "FR"], "--country must be one of US, CA, DE"],
    [["spam", "import", "--source", "ftc", "--file", fixture("ftc-dnc.csv"), "--dry-run", "yes"], "dry-run"],
  ])("refuses %j with a clear message, exit 2 and nothing written", async (args, message) => {
    const before = await count(`SELECT count(*)::int AS n FROM spam_imports`);
    const res = admin(...(args as string[]));
    expect(res.status).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
    expect(await count(`SELECT count(*)::int AS n FROM spam_imports`)).toBe(before);
  });

  it("refuses a file without a header row, without echoing its first report", () => {
    const file = path.join(tmp, "headerless.csv");
    writeFileSync(file, readFileSync(fixture("ftc-dnc.csv"), "utf8").split("\r\n").slice(1).join("\r\n"));
    const res = admin("spam", "import", "--source", "ftc", "--file", file);
    expect(res.status).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain("wrong header for --source ftc");
    for (const text of ["2025550123", ...PERSONAL_OR_REPORT_TEXT]) expect(res.stderr).not.toContain(text);
  });

  it("refuses an empty file and a file with only a BOM", () => {
    for (const [name, content] of [["empty.csv", ""], ["bom-only.csv", "\uFEFF\r\n"]] as const) {
      const file = path.join(tmp, name);
      writeFileSync(file, content);
      const res = admin("spam", "import", "--source", "community", "--file", file);
      expect(res.status).toBe(2);
      expect(res.stdout).toBe("");
      expect(res.stderr).toContain("is empty: expected a header row");
    }
  });

  it("lists the importer in the usage text", () => {
    const res = admin();
    expect(res.status).toBe(2);
    expect(res.stderr).toContain("spam import --source ftc|fcc|regulator|community|unassigned --file PATH");
  });
});
