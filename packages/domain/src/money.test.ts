import { CURRENCY, MICROS_PER_UNIT, formatAmount, money, parseAmount } from "./money";

describe("formatAmount", () => {
  it.each([
    [0n, "0.00"],
    [1n, "0.000001"],
    [10n, "0.00001"],
    [2_500n, "0.0025"],
    [10_000n, "0.01"],
    [500_000n, "0.50"],
    [1_000_000n, "1.00"],
    [12_500_000n, "12.50"],
    [12_345_678n, "12.345678"],
    [123_456_789_012_000_000n, "123456789012.00"],
  ])("formats %s micro-dollars as %s", (micros, text) => {
    expect(formatAmount(micros)).toBe(text);
  });

  it("formats negative amounts (refunds, releases) with a leading minus", () => {
    expect(formatAmount(-500_000n)).toBe("-0.50");
    expect(formatAmount(-12_345_678n)).toBe("-12.345678");
  });

  it("is exact beyond the range of a float", () => {
    const micros = 9_007_199_254_740_993n; // 2^53 + 1
    expect(formatAmount(micros)).toBe("9007199254.740993");
  });
});

describe("money", () => {
  it("pairs the formatted amount with USD", () => {
    expect(CURRENCY).toBe("USD");
    expect(money(2_500n)).toEqual({ amount: "0.0025", currency: "USD" });
  });
});

describe("parseAmount", () => {
  it.each([
    ["0", 0n],
    ["0.0", 0n],
    ["1", 1_000_000n],
    ["12.5", 12_500_000n],
    ["12.50", 12_500_000n],
    ["0.0025", 2_500n],
    ["0.000001", 1n],
    ["999999999999.999999", 999_999_999_999_999_999n],
  ])("reads %j as %s micro-dollars", (text, micros) => {
    expect(parseAmount(text)).toBe(micros);
  });

  it("reads JSON numbers through their decimal form, without float error", () => {
    expect(parseAmount(12.5)).toBe(12_500_000n);
    expect(parseAmount(0.1)).toBe(100_000n);
    expect(parseAmount(0.3)).toBe(300_000n);
    expect(parseAmount(1.005)).toBe(1_005_000n);
    expect(parseAmount(0)).toBe(0n);
  });

  it.each([
    "",
    " 1",
    "1 ",
    "-1",
    "+1",
    "01",
    "1.",
    ".5",
    "1.0000001",
    "1e3",
    "1,50",
    "1_000",
    "0x10",
    "1000000000000",
    "NaN",
    "Infinity",
  ])("refuses %j", (text) => {
    expect(parseAmount(text)).toBeNull();
  });

  it.each([-1, 1e-7, 1e21, Number.NaN, Number.POSITIVE_INFINITY, 1.23456789])("refuses the JSON number %p", (value) => {
    expect(parseAmount(value)).toBeNull();
  });

  it("round-trips with formatAmount", () => {
    for (const micros of [0n, 1n, 99n, 2_500n, 1_000_000n, 12_345_678n, 999_999_999_999_999_999n]) {
      expect(parseAmount(formatAmount(micros))).toBe(micros);
    }
    for (const text of ["0.00", "0.0025", "12.50", "12.345678"]) expect(formatAmount(parseAmount(text) as bigint)).toBe(text);
  });

  it("uses 1,000,000 micro-dollars per dollar", () => {
    expect(MICROS_PER_UNIT).toBe(1_000_000n);
    expect(parseAmount("1")).toBe(MICROS_PER_UNIT);
  });
});
