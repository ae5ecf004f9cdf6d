import { CHECK_STATUSES, isConclusive, summarise, type CheckResult, type ResultRow } from "./results";

const check = (registered: boolean | null, status: CheckResult["status"] = "ok"): CheckResult => ({
  service: "whatsapp",
  status,
  registered,
  attributes: null,
  cached: false,
  billed: false,
  checked_at: null,
});
const row = (rowNo: number, checks: CheckResult[]): ResultRow => ({
  row_no: rowNo,
  kind: "number",
  input: "+12025550100",
  e164: "+12025550100",
  country: "US",
  number_status: "valid",
  email: null,
  email_status: null,
  checks,
});

describe("isConclusive", () => {
  it("counts only ok as a conclusive (billable) answer", () => {
    expect(CHECK_STATUSES.filter(isConclusive)).toEqual(["ok"]);
    expect(CHECK_STATUSES).toEqual(expect.arrayContaining(["unknown", "unsupported_country", "pending", "invalid", "duplicate", "suppressed"]));
  });
});

describe("summarise", () => {
  it("counts rows, and checks by their registered answer", () => {
    const rows = [row(1, [check(true), check(false), check(null)]), row(2, [check(true), check(null, "unknown")]), row(3, [])];
    expect(summarise(rows)).toEqual({ total: 3, registered: 2, not_registered: 1, unknown: 2 });
  });

  it("gives zeros for no rows", () => {
    expect(summarise([])).toEqual({ total: 0, registered: 0, not_registered: 0, unknown: 0 });
  });
});
