import {
  TEST_MODE_SPAM_AS_OF,
  TEST_PROFILES,
  TEST_SPAM_REPORTS,
  derivedAnswer,
  derivedSpamReports,
  parseNumber,
  prepareRows,
  type Answer,
  type PreparedRow,
  type TestSpamReports,
} from "@svc/domain";
import { createStore, type Store } from "@svc/store";
import { ReportStoreSpamSource } from "../../packages/sources/src/spam-reports";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * Issue 13, item 7: test mode must answer only what live scoring can. Each test-mode
 * spam answer's reports go into a real report store, and live scoring (as of the day
 * test mode scores at) must give exactly the test-mode answer.
 */
const STORED_SOURCE = { regulator: "regulator_actions", government: "ftc_dnc", community: "community", unassigned: "unassigned_offers" } as const;

let env: TestEnv;
let store: Store;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2, applicationName: "spam-test-mode-live" });
});
afterAll(async () => {
  await store.close();
});

async function storeReports(e164: string, { reports }: TestSpamReports): Promise<void> {
  await store.pool.query(
    `INSERT INTO spam_reports (e164, signal_class, source, category, reported_on, dedupe_key)
     SELECT $1, c, s, cat, d::date, $1 || ':' || ord FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(c, s, cat, d, ord)`,
    [e164, reports.map((r) => r.signalClass), reports.map((r) => STORED_SOURCE[r.signalClass]), reports.map((r) => r.category), reports.map((r) => r.day)],
  );
}

/** Live answers as of test mode's day, with the test profile's VoIP hint as the number type. */
async function live(rows: Array<{ e164: string; voip: boolean }>): Promise<Answer[]> {
  const source = new ReportStoreSpamSource(store.pool, { today: () => TEST_MODE_SPAM_AS_OF });
  const ids = rows.map(({ e164, voip }) => {
    const parsed = parseNumber(e164);
    if (!parsed.valid) throw new Error("test number is not valid");
    return { e164, email: null, domain: null, country: parsed.country, numberType: voip ? ("VOIP" as const) : parsed.numberType };
  });
  return source.lookupMany(ids, new AbortController().signal);
}

describe("test-mode spam answers are answers live scoring gives", () => {
  it("for every documented test number", async () => {
    const profiles = TEST_PROFILES.filter((p) => p.answers["number.spam"]?.status === "ok");
    expect(profiles.map((p) => p.value).sort()).toEqual(Object.keys(TEST_SPAM_REPORTS).sort());
    for (const p of profiles) await storeReports(p.value, TEST_SPAM_REPORTS[p.value] as TestSpamReports);
    const answers = await live(profiles.map((p) => ({ e164: p.value, voip: (TEST_SPAM_REPORTS[p.value] as TestSpamReports).voip })));
    expect(profiles.map((p, i) => [p.value, answers[i]])).toEqual(profiles.map((p) => [p.value, p.answers["number.spam"]]));
    // The two values issue 13 found out of live scoring's reach.
    expect(answers[profiles.findIndex((p) => p.value === "+12025550104")]?.attributes).toMatchObject({ risk_score: 20, reason_unassigned: true, sources: 1 });
    expect(answers[profiles.findIndex((p) => p.value === "+12025550102")]?.attributes).toMatchObject({ risk_score: 36, reason_government: true, sources: 1 });
  });

  it("for the derived answers of other numbers", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => prepareRows([`+1213555${String(3000 + i)}`], [])[0] as PreparedRow).filter((r) => r.status === "valid");
    expect(rows.length).toBe(200);
    const derived = rows.map((r) => ({ e164: r.e164 as string, ...derivedSpamReports(r) }));
    for (const d of derived) await storeReports(d.e164, d);
    const answers = await live(derived);
    expect(rows.map((r, i) => [r.e164, answers[i]])).toEqual(rows.map((r) => [r.e164, derivedAnswer("number.spam", r)]));
    expect(new Set(answers.map((a) => a.attributes?.risk_level))).toEqual(new Set(["no_reports", "low", "medium", "high"]));
  });
});
