import { CHECKS, CHECK_CODES, checkDef, resolveCheck } from "./checks";

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
    expect(names).toEqual(["catch_all", "disposable", "mx_found"]);
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
