import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import * as contract from "@svc/contract";
import * as domain from "@svc/domain";

/**
 * The client rules have one owner: the contract (and the domain behind it) defines
 * the limits, the amount pattern and the key pattern; the SDK bundles and exports
 * them with the money helpers and the lookup's cost quote; the CLI and the MCP server
 * import them (tests/cli/client-rules.test.ts, tests/mcp/client-rules.test.ts).
 * Checked on the published bundle, where the contract's code is a bundled copy.
 */
const ROOT = path.resolve(__dirname, "..", "..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = require(path.join(ROOT, "packages", "sdk", "dist", "index.cjs")) as typeof import("@svc/sdk");

describe("the published SDK carries the contract's rules", () => {
  it("LIMITS are the contract's", () => {
    expect(sdk.LIMITS).toEqual(contract.LIMITS);
    // The request schemas say the same as LIMITS where both speak.
    expect(sdk.schemas.LookupRequest.properties.checks.maxItems).toBe(sdk.LIMITS.checksPerRequest);
    expect(sdk.schemas.JobRequest.properties.checks.maxItems).toBe(sdk.LIMITS.checksPerRequest);
    expect(sdk.schemas.LookupRequest.properties.wait.maximum).toBe(sdk.LIMITS.maxWaitSeconds);
    expect(sdk.schemas.LookupRequest.properties.wait.default).toBe(sdk.LIMITS.defaultLookupWaitSeconds);
    expect(sdk.schemas.WaitQuery.properties.wait.maximum).toBe(sdk.LIMITS.maxWaitSeconds);
  });

  it("the amount and API-key patterns are the domain's", () => {
    for (const name of ["AMOUNT_PATTERN", "API_KEY_PATTERN", "API_KEY_PREFIX_PATTERN"] as const) {
      expect([name, sdk[name].source, sdk[name].flags]).toEqual([name, domain[name].source, domain[name].flags]);
    }
    for (const mode of domain.API_KEY_MODES) expect(sdk.API_KEY_PATTERN.exec(domain.generateApiKey(mode))?.[1]).toBe(mode);
  });

  it("parses and formats amounts as the gateway does", () => {
    const inputs: Array<string | number> = ["0", "1", "1.2", "0.0025", "1.234567", "1.2345678", "01", "1.", ".5", "-1", "", " 1", "1e3", "999999999999.999999", "1000000000000", 1.1, 0.0025, 5, -1, Number.NaN, 1e21];
    for (const v of inputs) expect([v, sdk.parseAmount(v)]).toEqual([v, domain.parseAmount(v)]);
    for (const micros of [0n, 1n, 10_000n, 1_100_000n, 1_234_567n, 12_500_000n, -2_500n]) expect(sdk.formatAmount(micros)).toBe(domain.formatAmount(micros));
    expect(sdk.MICROS_PER_UNIT).toBe(domain.MICROS_PER_UNIT);
  });

  it("names a key's mode by its prefix and scrubs key-shaped text, keeping the prefix", () => {
    const live = domain.generateApiKey("live");
    expect(sdk.apiKeyMode(live)).toBe("live");
    expect(sdk.apiKeyMode("svc_agent_x")).toBe("agent");
    expect(sdk.apiKeyMode("svc_prod_abc")).toBeNull();
    expect(sdk.apiKeyMode("")).toBeNull();
    expect(sdk.apiKeyMode(undefined)).toBeNull();
    expect(sdk.redactSecrets(`key ${live} end`)).toBe("key svc_live_[redacted] end");
    expect(sdk.redactSecrets("svc_test_short")).toBe("svc_test_short");
  });
});

describe("the lookup's cost quote", () => {
  /** A catalog as GET /v1/services answers, built from the domain's checks, each with its own price. */
  const codes = domain.CHECK_CODES;
  const price = (i: number) => `0.00${i + 1}5`;
  const catalog = {
    object: "list" as const,
    account_specific: true,
    data: codes.map((code, i) => ({
      code,
      aliases: [...domain.CHECKS[code].aliases],
      input: domain.CHECKS[code].input,
      realtime: true,
      bulk: true,
      description: "",
      countries: null,
      attributes: [],
      prices: { live: { amount: price(i), currency: "USD" as const }, test: { amount: "0.00", currency: "USD" as const } },
    })),
  };
  const prices = new Map(codes.map((c, i) => [c, domain.parseAmount(price(i)) as bigint]));

  it("is the server's formula: every identifier × every check of its input type × its price", () => {
    const numbers = ["+12025550101", "+12025550101", "not a number"];
    const emails = ["a@example.com"];
    const quote = sdk.quoteLookup(catalog, "live", { numbers, emails, checks: [...codes] });
    expect(quote.maxCostMicros).toBe(domain.maxCostMicros({ number: 3, email: 1 }, codes, prices));
    expect(quote.maxCostMicros).toBeGreaterThan(0n);
    expect(quote).toMatchObject({ numbers: 3, emails: 1, checksTotal: codes.reduce((n, c) => n + (domain.CHECKS[c].input === "email" ? 1 : 3), 0) });
  });

  it("resolves aliases, counts a check the catalog does not list as nothing, and prices test keys at the test price", () => {
    const spam = codes.findIndex((c) => domain.CHECKS[c].aliases.includes("spam"));
    expect(sdk.quoteLookup(catalog, "live", { numbers: ["+12025550101", "+12025550102"], checks: ["spam", "no.such_check"] })).toEqual({
      maxCostMicros: 2n * (domain.parseAmount(price(spam)) as bigint),
      numbers: 2,
      emails: 0,
      checksTotal: 2,
    });
    expect(sdk.quoteLookup(catalog, "test", { numbers: ["+12025550101"], checks: [...codes] }).maxCostMicros).toBe(0n);
    expect([sdk.priceModeOf("test"), sdk.priceModeOf("live"), sdk.priceModeOf("agent"), sdk.priceModeOf(null)]).toEqual(["test", "live", "live", "live"]);
  });
});

/** Every non-test TypeScript source of the packages and services, relative to the root. */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && e.name !== "dist") walk(full);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts")) out.push(path.relative(ROOT, full));
    }
  };
  for (const top of ["packages", "services"]) for (const pkg of readdirSync(path.join(ROOT, top))) walk(path.join(ROOT, top, pkg, "src"));
  return out;
}

describe("one definition of each pattern", () => {
  // The amount a client writes: `(0|[1-9]…{0,11})` and up to 6 fraction digits (the
  // contract's AmountString, what the API writes, allows 2 to 6 and a sign: another rule).
  const amountCopy = (line: string) => /\{0,11\}/.test(line) && /\{1,6\}/.test(line);
  // The key's prefix written out instead of built from API_KEY_MODES.
  const keyCopy = (line: string) => /svc_\((\?:)?test\|live\|agent\)/.test(line) || /svc_\[a-z\]/.test(line);
  /**
   * Copies outside the client packages that this change could not reach, each with why.
   * Remove an entry when its copy goes; a new copy anywhere else fails.
   */
  const KNOWN_KEY_COPIES: Record<string, string> = {
    "packages/process/src/scrub.ts": "the log scrubber: process sits below domain and imports no @svc package",
    "services/gateway/src/http/authenticate.ts": "the gateway's check for a key sent in the query string",
  };

  const hits = (match: (line: string) => boolean) =>
    sources().filter((f) => readFileSync(path.join(ROOT, f), "utf8").split("\n").some((l) => !/^\s*(\/\/|\*)/.test(l) && match(l)));

  it("the money-amount pattern is written once, in the domain", () => {
    expect(hits(amountCopy)).toEqual(["packages/domain/src/money.ts"]);
  });

  it("the API-key pattern is built once, in the domain, from its list of modes", () => {
    expect(hits(keyCopy).filter((f) => !(f in KNOWN_KEY_COPIES))).toEqual([]);
    expect(readFileSync(path.join(ROOT, "packages/domain/src/api-key-pattern.ts"), "utf8")).toContain("API_KEY_MODES.join");
  });

  it("the CLI and the MCP server keep no money helpers and no copy of a limit", () => {
    const clients = sources().filter((f) => f.startsWith("packages/cli/") || f.startsWith("packages/mcp/"));
    expect(clients.length).toBeGreaterThan(10);
    const offending = clients.filter((f) => {
      const text = readFileSync(path.join(ROOT, f), "utf8");
      return /1_000_000n|padStart\(6|\b50[_,]?000\b/.test(text);
    });
    expect(offending).toEqual([]);
  });
});
