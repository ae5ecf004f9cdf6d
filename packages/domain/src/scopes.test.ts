import { DEFAULT_SCOPES, SANDBOX_SCOPES, SCOPES, isScope, scopesForNewKey } from "./scopes";

describe("scopes", () => {
  it("knows exactly the documented scopes", () => {
    expect([...SCOPES].sort()).toEqual(["account:read", "jobs:read", "jobs:read_all", "jobs:write", "lookup:write", "webhooks:manage"]);
    for (const s of SCOPES) expect(isScope(s)).toBe(true);
    for (const s of ["", "jobs", "JOBS:READ", "webhooks:*", "admin"]) expect(isScope(s)).toBe(false);
  });

  it("gives test and live keys every scope except webhooks:manage by default", () => {
    for (const mode of ["test", "live"] as const) {
      for (const requested of [undefined, []]) {
        const scopes = scopesForNewKey(mode, requested);
        expect(scopes).not.toContain("webhooks:manage");
        expect([...scopes, "webhooks:manage"].sort()).toEqual([...SCOPES].sort());
      }
    }
    expect(DEFAULT_SCOPES).not.toContain("webhooks:manage");
  });

  it("gives a key exactly the scopes asked for, once each", () => {
    expect(scopesForNewKey("live", ["webhooks:manage", "jobs:read", "jobs:read"])).toEqual(["webhooks:manage", "jobs:read"]);
    expect(scopesForNewKey("agent", ["lookup:write", "lookup:write"])).toEqual(["lookup:write"]);
  });

  it("refuses an agent key without an explicit list", () => {
    expect(() => scopesForNewKey("agent", undefined)).toThrow();
    expect(() => scopesForNewKey("agent", [])).toThrow();
  });

  it("never gives the sandbox webhooks:manage or jobs:read_all", () => {
    expect(SANDBOX_SCOPES).not.toContain("webhooks:manage");
    expect(SANDBOX_SCOPES).not.toContain("jobs:read_all");
  });

  it("returns a fresh list the caller may change", () => {
    const scopes = scopesForNewKey("test", undefined);
    scopes.pop();
    expect(scopesForNewKey("test", undefined)).toHaveLength(DEFAULT_SCOPES.length);
  });
});
