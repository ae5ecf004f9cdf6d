import { CATEGORY_CODES, normaliseCategory, withRobocallFlag } from "./categories";
import { latestDay, parseReportDay } from "./dates";
import { normaliseNumber } from "./numbers";
import { columnKey, dedupeKey } from "./types";

describe("spam importer normalisation", () => {
  it.each([
    ["Reducing your debt (credit cards, mortgage, student loans)", "debt_relief"],
    ["Debt collection", "debt_collection"],
    ["Calls pretending to be government, businesses, or family and friends", "impersonation"],
    ["Medical  &amp; prescriptions", "medical"],
    ["Home security & alarms", "home_security"],
    ["Computer & technical support", "tech_support"],
    ["Energy, solar,  & utilities", "energy"],
    ["Home improvement & cleaning", "home_improvement"],
    ["Work from home & other ways to make money", "work_from_home"],
    ["Warranties  & protection plans", "warranty"],
    ["Lotteries, prizes & sweepstakes", "prize"],
    ["Vacation & timeshares", "travel"],
    ["Surveys & political calls", "survey"],
    ["Charities", "charity"],
    ["Other", "other"],
    ["Robocalls", "robocall"],
    ["Telemarketing (including do not call and spoofing)", "telemarketing"],
    ["Junk Faxes", "junk_fax"],
    ["Debt-Collection", "debt_collection"],
    ["Rufnummernabschaltung wegen Ping-Anrufen", "wangiri"],
    ["Werbeanruf", "telemarketing"],
    ["Scam, asked for card number", "fraud"],
    ["shopping club", "other"],
    ["No Subject Provided", null],
    ["Dropped call or no message", null],
    ["Unwanted Calls", null],
    ["", null],
  ])("maps %j to %j", (label, code) => {
    expect(normaliseCategory(label)).toBe(code);
    if (code !== null) expect(CATEGORY_CODES).toContain(code);
  });

  it("makes a recorded message a robocall only when the label says nothing more specific", () => {
    expect(withRobocallFlag(null, true)).toBe("robocall");
    expect(withRobocallFlag("other", true)).toBe("robocall");
    expect(withRobocallFlag("debt_relief", true)).toBe("debt_relief");
    expect(withRobocallFlag(null, false)).toBeNull();
  });

  it.each([
    ["2026-09-22", "2026-09-22"],
    ["2026-09-22 18:22:00", "2026-09-22"],
    ["2026-09-22T23:30:00-04:00", "2026-09-22"],
    ["09/02/2026", "2026-09-02"],
    ["9/2/2026 10:15:22 AM", "2026-09-02"],
    ["15.10.2026", "2026-10-15"],
    ["2026-11-22", "2026-11-22"],
    ["2026-11-23", null],
    ["31.02.2026", null],
    ["2026-13-01", null],
    ["1989-12-31", null],
    ["yesterday", null],
    ["", null],
  ])("reads the report day of %j as %j", (text, day) => {
    expect(parseReportDay(text, latestDay(new Date("2026-11-21T13:00:00Z")))).toBe(day);
  });

  it("normalises numbers to E.164 and keeps US, CA and DE only", () => {
    expect(normaliseNumber("(202) 555-0123", "US", ["US", "CA"])).toEqual({ ok: true, e164: "+12025550123", country: "US" });
    expect(normaliseNumber("1-416-555-0142", "US", ["US", "CA"])).toEqual({ ok: true, e164: "+14165550142", country: "CA" });
    expect(normaliseNumber("030 23125 417", "DE", ["US", "CA", "DE"])).toEqual({ ok: true, e164: "+493023125417", country: "DE" });
    expect(normaliseNumber("0049 30 23125417", null, ["US", "CA", "DE"])).toEqual({ ok: true, e164: "+493023125417", country: "DE" });
    expect(normaliseNumber("+49 30 23125417", "US", ["US", "CA"])).toEqual({ ok: false, reason: "unsupported_country" });
    expect(normaliseNumber("+61 491 570 156", null, ["US", "CA", "DE"])).toEqual({ ok: false, reason: "unsupported_country" });
    expect(normaliseNumber("0123456789", "US", ["US", "CA"])).toEqual({ ok: false, reason: "invalid_number" });
    expect(normaliseNumber("1-800-FLOWERS", "US", ["US", "CA"])).toEqual({ ok: false, reason: "invalid_number" });
    expect(normaliseNumber("718-555-0123", null, ["US", "CA", "DE"])).toEqual({ ok: false, reason: "no_country" });
    expect(normaliseNumber("  ", "US", ["US"])).toEqual({ ok: false, reason: "missing_number" });
  });

  it("matches header names case-insensitively with spaces, dashes and underscores alike", () => {
    expect(columnKey(" Caller ID Number ")).toBe(columnKey("caller_id_number"));
    expect(columnKey("Company_Phone_Number")).toBe(columnKey("company-phone-number"));
  });

  it("builds the same dedupe key for the same report, a different one for different fields", () => {
    const key = dedupeKey("ftc_dnc", "+12025550123", "2026-09-01", ["2026-09-02 00:01:17", "Y"]);
    expect(key).toBe(dedupeKey("ftc_dnc", "+12025550123", "2026-09-01", ["2026-09-02 00:01:17", "Y"]));
    expect(key).toMatch(/^ftc_dnc:\+12025550123:2026-09-01:[0-9a-f]{24}$/);
    expect(key).not.toBe(dedupeKey("ftc_dnc", "+12025550123", "2026-09-01", ["2026-09-02 00:01:18", "Y"]));
  });
});
