import { LIMITS as CONTRACT_LIMITS } from "@svc/contract";
import { AMOUNT_PATTERN, LIMITS, schemas } from "@svc/sdk";
import { svc } from "./run";

/**
 * The built `svc` states and applies the SDK's rules (the contract's), not copies:
 * its limits in help and option ranges, `--max-cost` read with the SDK's amount
 * pattern, the key's mode from the SDK's prefix pattern. Nothing here reaches an API:
 * a mistake stops before anything is sent, and the rest goes to a closed port.
 */
const CLOSED = "http://127.0.0.1:9";
/** Help as one line: commander wraps it to the terminal's width. */
const help = async (args: string[]) => (await svc([...args, "--help"])).stdout.replace(/\s+/g, " ");

describe("svc's limits are the SDK's, which are the contract's", () => {
  it("says them in its help and enforces them on its options", async () => {
    expect(LIMITS).toEqual(CONTRACT_LIMITS);
    expect(await help(["lookup"])).toContain(`up to ${LIMITS.lookupIdentifiers} per call`);
    expect(await help([])).toContain(`bulk jobs of up to ${LIMITS.jobIdentifiers.toLocaleString("en-US")} numbers`);
    const pageMax = schemas.ResultsQuery.properties.limit.maximum as number;
    expect(await help(["jobs", "results"])).toContain(`rows per request (1-${pageMax}) (default: ${pageMax})`);
    expect(await help(["jobs", "get"])).toContain(`(0-${LIMITS.maxWaitSeconds})`);
    const tooLong = await svc(["lookup", "+12025550101", "--wait", String(LIMITS.maxWaitSeconds + 1)]);
    expect([tooLong.code, tooLong.stderr]).toEqual([2, expect.stringContaining(`--wait must be a whole number from 0 to ${LIMITS.maxWaitSeconds}`)]);
  });
});

describe("--max-cost takes exactly the amounts the API reads (the SDK's AMOUNT_PATTERN)", () => {
  it.each(["5", "12.50", "0.000001", "999999999999.999999", "USD 5.00", "$5", "5 USD", "05", "5.1234567", "-1", "1e3", "5,00", "1000000000000"])("%s", async (value) => {
    const amount = value.trim().replace(/^\$|^USD\s*/i, "").replace(/\s*USD$/i, "");
    const r = await svc(["lookup", "+12025550101", "--max-cost", value, "--timeout", "1"], { key: `svc_test_${"a".repeat(36)}`, baseUrl: CLOSED });
    if (AMOUNT_PATTERN.test(amount)) expect([value, r.code]).toEqual([value, 4]);
    else expect([value, r.code, r.stderr]).toEqual([value, 2, expect.stringContaining("--max-cost must be an amount in USD")]);
  });
});

describe("--verbose names the key's mode by the SDK's prefix pattern", () => {
  it.each([
    [`svc_agent_${"b".repeat(36)}`, "agent key"],
    [`svc_live_${"c".repeat(36)}`, "live key"],
    ["sk_live_something", "unrecognised key"],
  ])("%#", async (key, says) => {
    const r = await svc(["services", "--verbose", "--timeout", "1"], { key, baseUrl: CLOSED });
    expect(r.stderr).toContain(`svc: API key: from SVC_API_KEY (${says})`);
    expect(r.stderr).not.toContain(key);
  });
});
