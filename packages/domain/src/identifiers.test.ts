import { parseEmail } from "./email";
import { maskEmailInput, maskNumberInput } from "./masking";
import { numberTypeOf, parseNumber } from "./phone";
import { prepareRows } from "./rows";

describe("parseNumber", () => {
  it.each([
    ["+12025550101", "+12025550101", "US"],
    ["+1 202-555-0101", "+12025550101", "US"],
    ["+1 (202) 555-0101", "+12025550101", "US"],
    ["+1.202.555.0101", "+12025550101", "US"],
    ["  +1 202 555 0101  ", "+12025550101", "US"],
    ["0012025550101", "+12025550101", "US"],
    ["12025550101", "+12025550101", "US"],
    ["+49 30 23125000", "+493023125000", "DE"],
    ["0049/30/23125000", "+493023125000", "DE"],
    ["+44 20 7183 8750", "+442071838750", "GB"],
    ["+14165550100", "+14165550100", "CA"],
  ])("reads %j as %s (%s)", (input, e164, country) => {
    expect(parseNumber(input)).toMatchObject({ valid: true, e164, country });
  });

  it("reports the number type when asked (it costs as much as validation)", () => {
    expect(parseNumber("+4915112345678", undefined, { withType: true })).toMatchObject({ valid: true, numberType: "MOBILE" });
    expect(parseNumber("+493023125000", undefined, { withType: true })).toMatchObject({ valid: true, numberType: "FIXED_LINE" });
    expect(parseNumber("+4915112345678")).not.toHaveProperty("numberType");
    expect(numberTypeOf("+493023125000")).toBe("FIXED_LINE");
  });

  it("reads a national number in the given default country", () => {
    expect(parseNumber("030 23125000", "DE")).toMatchObject({ valid: true, e164: "+493023125000", country: "DE" });
    expect(parseNumber("(202) 555-0101", "us")).toMatchObject({ valid: true, e164: "+12025550101" });
    expect(parseNumber("+12025550101", "DE")).toMatchObject({ valid: true, e164: "+12025550101", country: "US" });
  });

  it.each([
    "",
    "   ",
    "12",
    "abc",
    "+1-800-FLOWERS",
    "+1 202 555 010",
    "+999123",
    "+1 202 555 0101 ext. 12",
    "+1 202 555 0101; drop table",
    "tel:+12025550101",
    `+1${" ".repeat(40)}2025550101`,
    "+12025550101\u0000",
  ])("refuses %j", (input) => {
    expect(parseNumber(input)).toEqual({ valid: false });
  });
});

describe("parseEmail", () => {
  it("keeps the local part as given and lower-cases the domain", () => {
    expect(parseEmail("John.Smith@Example.COM")).toEqual({ valid: true, email: "John.Smith@example.com", local: "John.Smith", domain: "example.com" });
  });

  it.each([
    "a@b.co",
    "  someone@example.org  ",
    "first.last+tag@mail.example.co.uk",
    "o'brien@example.ie",
    "x_y-z@sub-domain.example.com",
    "user@xn--80ak6aa92e.xn--p1ai",
    `${"a".repeat(64)}@example.com`,
  ])("accepts %j", (input) => {
    expect(parseEmail(input).valid).toBe(true);
  });

  it("accepts an address of exactly 254 characters and refuses 255", () => {
    const domain = (n: number) => `${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(n)}.com`;
    const at254 = `${"a".repeat(64)}@${domain(57)}`;
    expect(at254).toHaveLength(254);
    expect(parseEmail(at254).valid).toBe(true);
    const at255 = `${"a".repeat(64)}@${domain(58)}`;
    expect(at255).toHaveLength(255);
    expect(parseEmail(at255).valid).toBe(false);
  });

  it.each([
    "",
    "plainaddress",
    "@example.com",
    "user@",
    "user@@example.com",
    "invalid@@example.com",
    "user@localhost",
    "user@example",
    "user@example.c",
    "user@example.123",
    "user@-example.com",
    "user@example-.com",
    "user@exa_mple.com",
    "user@example..com",
    ".user@example.com",
    "user.@example.com",
    "us..er@example.com",
    "us er@example.com",
    '"quoted"@example.com',
    "user@[192.0.2.1]",
    "jöhn@example.com",
    `${"a".repeat(65)}@example.com`,
    `user@${"a".repeat(64)}.com`,
  ])("refuses %j", (input) => {
    expect(parseEmail(input)).toEqual({ valid: false });
  });
});

describe("maskNumberInput", () => {
  it("keeps the first three and last two digits and the layout", () => {
    expect(maskNumberInput("+12025550101")).toBe("+120******01");
    expect(maskNumberInput("+1 202-555-0101")).toBe("+1 20*-***-**01");
    expect(maskNumberInput("0049 30 23125000")).toBe("004* ** ******00");
  });

  it("hides every other digit", () => {
    const input = "+4915112345678";
    const masked = maskNumberInput(input);
    expect(masked).toHaveLength(input.length);
    expect(masked.replace(/\D/g, "")).toBe("49178");
    expect(masked).not.toContain("1234567");
  });

  it("masks letters and everything but phone punctuation: an address sent as a number never shows", () => {
    expect(maskNumberInput("abc")).toBe("***");
    expect(maskNumberInput("john.smith@example.com")).toBe("****.*************.***");
    expect(maskNumberInput("1-800-FLOWERS")).toBe("*-***-*******");
  });
});

describe("masking short and unusual inputs", () => {
  it("masks digits alone (the common E.164 input) as it masks them with punctuation around", () => {
    for (let length = 1; length <= 20; length += 1) {
      const digits = "98765432109876543210".slice(0, length);
      for (const input of [digits, `+${digits}`]) {
        // A trailing space takes the character-by-character path and is kept as it is.
        expect(maskNumberInput(input)).toBe(maskNumberInput(`${input} `).slice(0, -1));
      }
    }
  });

  it("masks every digit of a number too short to keep five of them", () => {
    expect(maskNumberInput("12345")).toBe("*****");
    expect(maskNumberInput("+1 202")).toBe("+* ***");
    expect(maskNumberInput("+1 202 555")).toBe("+* *** ***");
  });

  it("keeps a first character outside the BMP whole, never half a surrogate pair", () => {
    expect(maskEmailInput("😀@example.org")).toBe("😀***@example.org");
    expect(maskEmailInput("😀x")).toBe("😀*");
    expect(maskEmailInput("😀***@example.org").isWellFormed()).toBe(true);
  });
});

describe("maskEmailInput", () => {
  it("keeps the first character of the local part and the domain", () => {
    expect(maskEmailInput("john.smith@example.com")).toBe("j***@example.com");
    expect(maskEmailInput("a@example.com")).toBe("a***@example.com");
  });

  it("does not reveal the length of the local part", () => {
    expect(maskEmailInput("jo@example.com")).toBe(maskEmailInput("jonathan.smithers@example.com"));
  });

  it("masks inputs that are not addresses", () => {
    expect(maskEmailInput("invalid@@example.com")).toBe("i***@example.com");
    expect(maskEmailInput("not-an-address-at-all")).toBe("n********");
    expect(maskEmailInput("ab")).toBe("a*");
    expect(maskEmailInput("x")).toBe("*");
    expect(maskEmailInput("")).toBe("*");
    expect(maskEmailInput("@example.com")).not.toContain("example");
  });
});

describe("prepareRows", () => {
  it("puts numbers first, then e-mails, numbering rows from 1 and keeping each array index", () => {
    const rows = prepareRows(["+12025550101", "+493023125000"], ["a@example.org", "b@example.org"]);
    expect(rows.map((r) => [r.rowNo, r.kind, r.index, r.input])).toEqual([
      [1, "number", 0, "+12025550101"],
      [2, "number", 1, "+493023125000"],
      [3, "email", 0, "a@example.org"],
      [4, "email", 1, "b@example.org"],
    ]);
  });

  it("fills the parsed fields of valid rows", () => {
    const [n, e] = prepareRows(["+1 202-555-0101"], ["Someone@Example.ORG"]);
    expect(n).toMatchObject({ status: "valid", input: "+1 202-555-0101", e164: "+12025550101", country: "US", email: null, domain: null });
    expect(n?.numberType).toBeUndefined(); // computed only where a check needs it (numberTypeOf)
    expect(e).toMatchObject({ status: "valid", email: "Someone@example.org", domain: "example.org", e164: null, country: null, numberType: undefined });
  });

  it("reports invalid rows without parsed fields", () => {
    const [n, e] = prepareRows(["+999123"], ["nope"]);
    expect(n).toMatchObject({ status: "invalid", e164: null, country: null, numberType: undefined });
    expect(e).toMatchObject({ status: "invalid", email: null, domain: null });
  });

  it("marks later spellings of the same number as duplicates", () => {
    const rows = prepareRows(["+12025550101", "+1 (202) 555-0101", "0012025550101", "+12025550102"], []);
    expect(rows.map((r) => r.status)).toEqual(["valid", "duplicate", "duplicate", "valid"]);
    expect(rows[1]?.e164).toBe("+12025550101");
  });

  it("compares addresses case-insensitively", () => {
    const rows = prepareRows([], ["John@example.org", "john@EXAMPLE.org", "JOHN@example.org", "jane@example.org"]);
    expect(rows.map((r) => r.status)).toEqual(["valid", "duplicate", "duplicate", "valid"]);
  });

  it("never marks invalid rows as duplicates", () => {
    const rows = prepareRows(["junk", "junk"], ["bad", "bad"]);
    expect(rows.map((r) => r.status)).toEqual(["invalid", "invalid", "invalid", "invalid"]);
  });

  it("keeps numbers and addresses apart", () => {
    const rows = prepareRows(["+12025550101"], ["+12025550101@example.org"]);
    expect(rows.map((r) => r.status)).toEqual(["valid", "valid"]);
  });

  it("returns nothing for an empty request", () => {
    expect(prepareRows([], [])).toEqual([]);
  });
});
