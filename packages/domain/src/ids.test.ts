import { BASE62_ALPHABET, encodeBase62, randomBase62 } from "./base62";
import { ID_PREFIX, LEGACY_MONTH, idMonth, isId, newId, type IdKind } from "./ids";

describe("base62", () => {
  it("uses 62 distinct characters", () => {
    expect(new Set(BASE62_ALPHABET).size).toBe(62);
  });

  it("encodes integers with left padding", () => {
    expect(encodeBase62(0, 6)).toBe("000000");
    expect(encodeBase62(61, 1)).toBe("z");
    expect(encodeBase62(62, 1)).toBe("10");
    expect(encodeBase62(0xffffffff, 6)).toBe("4gfFC3");
  });

  it("makes random strings of the requested length over the whole alphabet", () => {
    const text = Array.from({ length: 50 }, () => randomBase62(40)).join("");
    expect(text).toMatch(/^[0-9A-Za-z]{2000}$/);
    expect(new Set(text).size).toBe(62);
  });
});

describe("ids", () => {
  it.each(Object.keys(ID_PREFIX) as IdKind[])("makes %s ids that it recognises", (kind) => {
    const id = newId(kind);
    expect(id.startsWith(`${ID_PREFIX[kind]}_`)).toBe(true);
    expect(isId(kind, id)).toBe(true);
  });

  it("never repeats an id", () => {
    expect(new Set(Array.from({ length: 1000 }, () => newId("lookup"))).size).toBe(1000);
  });

  it("refuses ids of another kind or of the wrong shape", () => {
    const id = newId("lookup");
    expect(isId("job", id)).toBe(false);
    expect(isId("lookup", id.toUpperCase())).toBe(false);
    expect(isId("lookup", "lkp_short")).toBe(false);
    expect(isId("lookup", `lkp_${"a".repeat(65)}`)).toBe(false);
    expect(isId("lookup", `${id}/../x`)).toBe(false);
    expect(isId("lookup", `${id}'`)).toBe(false);
    expect(isId("lookup", "")).toBe(false);
  });
});

describe("time-ordered lookup, job and event ids", () => {
  it("name the UTC month they were made in, across a month and a year boundary", () => {
    expect(idMonth(newId("lookup", 22, new Date("2026-11-30T23:59:59.999Z")))).toBe("2026-11-01");
    expect(idMonth(newId("lookup", 22, new Date("2026-12-01T00:00:00.000Z")))).toBe("2026-12-01");
    expect(idMonth(newId("job", 22, new Date("2026-12-31T23:59:59.999Z")))).toBe("2026-12-01");
    expect(idMonth(newId("job", 22, new Date("2027-01-01T00:00:00.000Z")))).toBe("2027-01-01");
    expect(idMonth(newId("event", 22, new Date("2027-01-01T00:00:00.000Z")))).toBe("2027-01-01");
  });

  it("sort by their time", () => {
    const a = newId("job", 22, new Date("2026-11-30T23:59:59.999Z"));
    const b = newId("job", 22, new Date("2026-12-01T00:00:00.000Z"));
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(-1);
  });

  it("leave every other id, old random ones included, in the legacy month", () => {
    expect(idMonth(`lkp_${"a".repeat(22)}`)).toBe(LEGACY_MONTH);
    expect(idMonth(newId("request"))).toBe(LEGACY_MONTH);
    expect(idMonth("lkp_missing")).toBe(LEGACY_MONTH);
    expect(idMonth("")).toBe(LEGACY_MONTH);
    expect(idMonth(`lkp_${"!".repeat(26)}`)).toBe(LEGACY_MONTH);
  });
});
