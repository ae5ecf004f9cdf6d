import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type pg from "pg";
import { SPAM_RECENCY, parseNumber, scoreSpam, weighReports, type Answer, type DatedReport, type SignalClass } from "@svc/domain";
import { createStore, type Store } from "@svc/store";
// The source file itself, not the package index: the scoring query is what is under test.
import { ReportStoreSpamSource } from "../../packages/sources/src/spam-reports";
import type { Identifier } from "../../packages/sources/src/types";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * Spam reports age (issue 13, item 4): small files in each source's published layout,
 * imported with the admin CLI, dated relative to today; then the report store's answers.
 */
const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");

const DAY = 86_400_000;
/** Today as the database sees it (UTC), and the day `n` days before it. */
const TODAY = new Date().toISOString().slice(0, 10);
const ago = (n: number, from = TODAY) => new Date(Date.parse(`${from}T00:00:00Z`) - n * DAY).toISOString().slice(0, 10);
const month = (day: string) => day.slice(0, 7);
/** `YYYY-MM-DD` as the FCC export writes it (`MM/DD/YYYY`). */
const us = (day: string) => `${day.slice(5, 7)}/${day.slice(8, 10)}/${day.slice(0, 4)}`;

const OLD_OFFER = "+13125550181"; // offered as unassigned in 2016 only
const RECENT_OFFER = "+13125550182"; // offered 10 days ago
const OFFER_90 = "+13125550183"; // offered exactly 90 days ago: still counts
const OFFER_91 = "+13125550184"; // 91 days ago: no longer
const OLD_OFFER_NEW_REPORT = "+13125550185"; // a 2016 offer and a community report 3 days old
const AGING_GOVERNMENT = "+13125550186"; // FTC and FCC complaints fresh, within a year, and from 2021
const OLD_COMPLAINT_ONLY = "+13125550187"; // one FCC complaint from 2018
const AGING_COMMUNITY = "+13125550188"; // 8 community reports two years old
const REGULATOR_HALF = "+14165550143"; // a CRTC action 500 days old
const REGULATOR_ANCIENT = "+14165550144"; // a CRTC action from 2019
const ALL = [OLD_OFFER, RECENT_OFFER, OFFER_90, OFFER_91, OLD_OFFER_NEW_REPORT, AGING_GOVERNMENT, OLD_COMPLAINT_ONLY, AGING_COMMUNITY, REGULATOR_HALF, REGULATOR_ANCIENT];
const national = (e164: string) => e164.slice(2); // NANP: drop "+1"

const FILES: Record<string, string> = {
  // FTC Do Not Call reported calls (the daily CSV's header, consumer columns present and unread).
  ftc: [
    "Company_Phone_Number,Created_Date,Violation_Date,Consumer_City,Consumer_State,Consumer_Area_Code,Subject,Recorded_Message_Or_Robocall",
    ...[1, 2, 3, 4].map((i) => `${national(AGING_GOVERNMENT)},${ago(20)} 10:00:0${i},${ago(20)} 09:00:00,X,X,312,Warranties & protection plans,Y`),
    ...[1, 2, 3, 4].map((i) => `${national(AGING_GOVERNMENT)},${ago(200)} 10:00:0${i},${ago(200)} 09:00:00,X,X,312,Vacation & timeshares,N`),
    // Six complaints from five years ago: more than any other subject, but too old to count.
    ...[1, 2, 3, 4, 5, 6].map((i) => `${national(AGING_GOVERNMENT)},${ago(2_000)} 10:00:0${i},${ago(2_000)} 09:00:00,X,X,312,"Reducing your debt (credit cards, mortgage, student loans)",N`),
  ].join("\r\n"),
  // FCC "Consumer Complaints Data - Unwanted Calls" export.
  fcc: [
    "Ticket ID,Ticket Created,Date of Issue,Time of Issue,Form,Method,Issue,Caller ID Number,Type of Call or Messge,Advertiser Business Number,City,State,Zip,Location (Center point of the Zip Code)",
    `7100001,${us(ago(4))} 10:15:22 AM,${us(ago(5))},4:05 p.m.,Phone,Wireless (cell phone/other mobile device),Robocalls,${national(AGING_GOVERNMENT)},Prerecorded Voice,,X,IL,60601,"(41.8858, -87.6181)"`,
    `7100002,03/02/2018 10:15:22 AM,03/01/2018,4:05 p.m.,Phone,Wireless (cell phone/other mobile device),Unwanted Calls,${national(OLD_COMPLAINT_ONLY)},Live Voice,,X,IL,60601,"(41.8858, -87.6181)"`,
  ].join("\n"),
  regulator: [
    "number,action_date,regulator,category",
    `416 555 0143,${ago(500)},CRTC,telemarketing`,
    `416 555 0144,2019-06-03,CRTC,telemarketing`,
  ].join("\n"),
  community: [
    "number,reported_at,category,report_id",
    `${OLD_OFFER_NEW_REPORT},${ago(3)}T18:20:00Z,robocall,c1`,
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => `${AGING_COMMUNITY},${ago(730)}T12:00:00Z,fraud,c-old-${i}`),
  ].join("\n"),
  unassigned: [
    "number,offered_on",
    `${OLD_OFFER},2016-04-12`,
    `${RECENT_OFFER},${ago(10)}`,
    `${OFFER_90},${ago(90)}`,
    `${OFFER_91},${ago(91)}`,
    `${OLD_OFFER_NEW_REPORT},2016-04-12`,
  ].join("\n"),
};

let env: TestEnv;
let store: Store;
let tmp: string;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2, applicationName: "spam-recency-test" });
  tmp = mkdtempSync(path.join(tmpdir(), "spam-recency-"));
  for (const [source, text] of Object.entries(FILES)) {
    const file = path.join(tmp, `${source}.csv`);
    writeFileSync(file, `${text}\n`);
    const res = spawnSync(process.execPath, [CLI, "spam", "import", "--source", source, "--file", file], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl, KEY_HASH_SECRET: env.keyHashSecret },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect([source, res.status, res.stderr]).toEqual([source, 0, ""]);
    const out = JSON.parse(res.stdout) as { rows_read: number; rows_added: number };
    expect([source, out.rows_added]).toEqual([source, out.rows_read]);
  }
});
afterAll(async () => {
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
});

function identifier(number: string): Identifier {
  const parsed = parseNumber(number);
  if (!parsed.valid) throw new Error("test number is not valid");
  return { e164: parsed.e164, email: null, domain: null, country: parsed.country, numberType: parsed.numberType };
}

/** Answers from the report store: by default as of the database's own today. */
async function answers(numbers: readonly string[], today?: string): Promise<Answer[]> {
  const source = new ReportStoreSpamSource(store.pool, today ? { today: () => today } : {});
  return source.lookupMany(numbers.map(identifier), new AbortController().signal);
}
const attributes = async (number: string, today?: string) => (await answers([number], today))[0]?.attributes as Record<string, unknown>;

const NOTHING = { risk_level: "no_reports", risk_score: 0, reason_regulator: false, reason_government: false, reason_community: false, reason_unassigned: false, top_category: null, first_seen: null, last_seen: null, sources: 0 };

describe("spam reports age (as of the database's today)", () => {
  it("does not set reason_unassigned for an offer from 2016, and does for one 10 days old", async () => {
    const [old, recent] = await answers([OLD_OFFER, RECENT_OFFER]);
    expect(old).toEqual({ status: "ok", registered: false, attributes: { ...NOTHING, voip_range: false } });
    expect(recent).toMatchObject({
      registered: true,
      attributes: { risk_level: "low", risk_score: 20, reason_unassigned: true, first_seen: month(ago(10)), last_seen: month(ago(10)), sources: 1 },
    });
  });

  it("counts an offer for 90 days and not a day longer", async () => {
    expect(await attributes(OFFER_90)).toMatchObject({ reason_unassigned: true, risk_score: 20 });
    expect(await attributes(OFFER_91)).toMatchObject(NOTHING);
  });

  it("keeps an old offer out of the reasons and the dates of a number with a recent report", async () => {
    expect(await attributes(OLD_OFFER_NEW_REPORT)).toMatchObject({
      reason_unassigned: false,
      reason_community: true,
      risk_score: 8,
      first_seen: month(ago(3)), // not 2016-04
      last_seen: month(ago(3)),
      sources: 1,
    });
  });

  it("counts government complaints by age: fresh fully, within a year half, five years old not at all", async () => {
    // 4 FTC + 1 FCC fresh, 4 FTC at 200 days (half each): 7 reports' worth, 29 points, low.
    // Counting all 15 alike would give 35, medium.
    expect(await attributes(AGING_GOVERNMENT)).toEqual({
      risk_level: "low",
      risk_score: 29,
      reason_regulator: false,
      reason_government: true,
      reason_community: false,
      reason_unassigned: false,
      voip_range: false,
      top_category: "warranty", // the six debt-relief complaints are too old to count
      first_seen: month(ago(200)),
      last_seen: month(ago(5)),
      sources: 1,
    });
    expect(await attributes(OLD_COMPLAINT_ONLY)).toMatchObject(NOTHING);
  });

  it("counts two-year-old community reports as a quarter each", async () => {
    // 8 reports at 730 days: 2 reports' worth, 12 points (8 fresh ones would be 20).
    expect(await attributes(AGING_COMMUNITY)).toMatchObject({ risk_level: "low", risk_score: 12, reason_community: true, top_category: "fraud", first_seen: month(ago(730)) });
  });

  it("rates a regulator action medium once it is over a year old, and not at all after three", async () => {
    expect(await attributes(REGULATOR_HALF)).toMatchObject({ risk_level: "medium", risk_score: 38, reason_regulator: true, first_seen: month(ago(500)), sources: 1 });
    expect(await attributes(REGULATOR_ANCIENT)).toMatchObject(NOTHING);
  });
});

describe("the scoring query", () => {
  let stored: Array<DatedReport & { e164: string }>;
  beforeAll(async () => {
    const { rows } = await store.pool.query<{ e164: string; signal_class: SignalClass; day: string; category: string | null }>(
      `SELECT e164, signal_class, to_char(reported_on, 'YYYY-MM-DD') AS day, category FROM spam_reports`,
    );
    stored = rows.map((r) => ({ e164: r.e164, signalClass: r.signal_class, day: r.day, category: r.category }));
    expect(stored.length).toBe(4 + 4 + 6 + 2 + 2 + 1 + 8 + 5);
  });

  it("answers exactly what scoreSpam gives for the same reports, on every side of every window's edge", async () => {
    // Every day on which some stored report crosses a window edge, the day before, and a few others.
    const edges = new Set<string>([TODAY, ago(-1), ago(-4_000)]);
    for (const r of stored) {
      for (const tiers of Object.values(SPAM_RECENCY)) {
        for (const t of tiers) for (const d of [t.withinDays, t.withinDays + 1]) edges.add(ago(-d, r.day));
      }
    }
    expect(edges.size).toBeGreaterThan(40);
    for (const today of edges) {
      const live = await answers(ALL, today);
      const expected = ALL.map((n) => scoreSpam(weighReports(stored.filter((r) => r.e164 === n), today)));
      expect([today, live]).toEqual([today, expected]);
    }
  });

  it("uses one query for a batch of 1,000 numbers and answers them in order", async () => {
    let queries = 0;
    const counting = { query: ((q: pg.QueryConfig) => ((queries += 1), store.pool.query(q))) as unknown as pg.Pool["query"] };
    const others = Array.from({ length: 1_000 - ALL.length }, (_, i) => `+1312555${String(2000 + i)}`);
    const batch = [...others.slice(0, 400), ...ALL, ...others.slice(400)];
    const source = new ReportStoreSpamSource(counting, { today: () => TODAY });
    const result = await source.lookupMany(batch.map(identifier), new AbortController().signal);
    expect(queries).toBe(1);
    expect(result.length).toBe(1_000);
    expect(result.slice(400, 400 + ALL.length)).toEqual(await answers(ALL));
    expect(result.filter((a) => a.registered).length).toBe(6);
  });
});
