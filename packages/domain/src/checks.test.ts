import { CHECKS, CHECK_CODES, checkDef, resolveCheck } from "./checks";
import { lineTypeName } from "./phone";
import { scoreSpam } from "./spam-score";
import { TEST_SPAM_EVIDENCE } from "./test-mode";

describe("check catalog", () => {
  it("defines every check code under its own code", () => {
    expect(Object.keys(CHECKS).sort()).toEqual([...CHECK_CODES].sort());
    for (const code of CHECK_CODES) {
      expect(checkDef(code).code).toBe(code);
      expect(checkDef(code).description.length).toBeGreaterThan(10);
      expect(checkDef(code).cacheTtlSeconds).toBeGreaterThan(0);
    }
  });

  it("applies e-mail checks to e-mails and the others to numbers", () => {
    const byInput = (kind: string) => CHECK_CODES.filter((c) => checkDef(c).input === kind).sort();
    expect(byInput("email")).toEqual(["email"]);
    expect(byInput("number")).toEqual(["carrier", "number.hlr", "number.spam", "signal.registered", "whatsapp"]);
  });

  it("keeps signal.registered for bulk jobs only", () => {
    expect(checkDef("signal.registered").realtime).toBe(false);
    for (const code of CHECK_CODES.filter((c) => c !== "signal.registered")) expect(checkDef(code).realtime).toBe(true);
  });

  it("hides number.hlr as coming soon and lists the rest as active", () => {
    expect(checkDef("number.hlr").availability).toBe("coming_soon");
    for (const code of CHECK_CODES.filter((c) => c !== "number.hlr")) expect(checkDef(code).availability).toBe("active");
  });

  it("limits number.spam to US, CA and DE", () => {
    expect(checkDef("number.spam").countries).toEqual(["US", "CA", "DE"]);
  });

  it("documents every number.spam attribute from the specification", () => {
    expect(checkDef("number.spam").attributes.map((a) => a.name)).toEqual([
      "risk_level",
      "risk_score",
      "reason_regulator",
      "reason_government",
      "reason_community",
      "reason_unassigned",
      "voip_range",
      "top_category",
      "first_seen",
      "last_seen",
      "sources",
    ]);
  });

  it("documents every number.hlr attribute from the specification", () => {
    expect(checkDef("number.hlr").attributes.map((a) => a.name)).toEqual(["status", "ported", "roaming", "network", "mcc_mnc", "country"]);
  });

  it("never answers with names, photos or profiles for e-mail", () => {
    const names = checkDef("email").attributes.map((a) => a.name);
    expect(names).toEqual(["catch_all", "disposable", "mx_found", "role_account", "free_provider", "did_you_mean"]);
  });

  it("gives each attribute a type and description", () => {
    for (const code of CHECK_CODES) {
      const names = checkDef(code).attributes.map((a) => a.name);
      expect(new Set(names).size).toBe(names.length);
      for (const a of checkDef(code).attributes) {
        expect(a.type).toMatch(/^(string|integer|boolean)(\|null)?$/);
        expect(a.description.length).toBeGreaterThan(0);
      }
    }
  });
});

describe("what each check's answer means", () => {
  it("says for every check what registered true, false and null mean, and which answers are billed", () => {
    for (const code of CHECK_CODES) {
      const def = checkDef(code);
      expect([code, def.registered.length > 20, def.billing.length > 20]).toEqual([code, true, true]);
      if (code !== "carrier") for (const word of ["true", "false", "null"]) expect([code, def.registered.includes(word)]).toEqual([code, true]);
    }
    // A scam number answers registered: true for number.spam: say so.
    expect(checkDef("number.spam").registered).toMatch(/^true: spam or nuisance reports are held/);
    expect(checkDef("carrier").registered).toMatch(/^Always null/);
    expect(checkDef("email").registered).toContain("catch-all");
  });

  it("lists the known values of every enumerated string attribute, and lists them in its description too", () => {
    const enumerated = CHECK_CODES.flatMap((code) => checkDef(code).attributes.filter((a) => a.values).map((a) => `${code}.${a.name}`));
    expect(enumerated.sort()).toEqual(["carrier.carrier_source", "carrier.line_type", "number.hlr.status", "number.spam.risk_level"]);
    for (const code of CHECK_CODES) {
      for (const a of checkDef(code).attributes.filter((x) => x.values)) {
        expect(a.type.startsWith("string")).toBe(true);
        for (const v of a.values ?? []) expect([code, a.name, a.description.includes(v)]).toEqual([code, a.name, true]);
      }
    }
  });

  it("names every line type the numbering data can give (the carrier source answers lineTypeName's values)", () => {
    const values = checkDef("carrier").attributes.find((a) => a.name === "line_type")?.values ?? [];
    for (const type of ["MOBILE", "FIXED_LINE", "FIXED_LINE_OR_MOBILE", "VOIP", "TOLL_FREE", "PREMIUM_RATE", "SHARED_COST", "PERSONAL_NUMBER", "PAGER", "UAN", "VOICEMAIL", undefined] as const) {
      expect(values).toContain(lineTypeName(type));
    }
  });

  it("scores spam into one of the documented risk levels, registered exactly when reports are held", () => {
    const levels = checkDef("number.spam").attributes.find((a) => a.name === "risk_level")?.values ?? [];
    for (const [value, evidence] of Object.entries(TEST_SPAM_EVIDENCE)) {
      const answer = scoreSpam(evidence);
      expect([value, levels.includes(String(answer.attributes?.risk_level))]).toEqual([value, true]);
      expect([value, answer.registered]).toEqual([value, answer.attributes?.risk_level !== "no_reports"]);
    }
  });
});

describe("resolveCheck", () => {
  it("resolves every code to itself", () => {
    for (const code of CHECK_CODES) expect(resolveCheck(code)).toBe(code);
  });

  it("resolves the documented aliases", () => {
    expect(resolveCheck("spam")).toBe("number.spam");
    expect(resolveCheck("hlr")).toBe("number.hlr");
  });

  it.each(["", "SPAM", "Number.Spam", "number.spam ", "signal", "sms", "toString", "__proto__", "constructor"])("does not resolve %j", (name) => {
    expect(resolveCheck(name)).toBeUndefined();
  });
});
