import {
  CONSECUTIVE_NUMBERS_LIMIT,
  DAILY_FAMILY_EMAILS_LIMIT,
  SAME_FAMILY_EMAILS_LIMIT,
  addressDigest,
  keyedDigest,
  emailFamilies,
  emailFamily,
  hasConsecutiveRun,
  hasLargeEmailFamily,
} from "./enumeration";
import { prepareRows } from "./rows";

/** `count` consecutive US numbers starting at +1 212 555 1000 + `from`. */
function numberRange(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `+1212555${String(1000 + from + i)}`);
}

function shuffled<T>(items: readonly T[]): T[] {
  // Deterministic reorder: odd positions reversed, then even positions.
  const odd = items.filter((_, i) => i % 2 === 1).reverse();
  const even = items.filter((_, i) => i % 2 === 0);
  return [...odd, ...even];
}

const numbers = (list: string[]) => prepareRows(list, []);
const emails = (list: string[]) => prepareRows([], list);

describe("limits", () => {
  it("match the documented enumeration guard", () => {
    expect(CONSECUTIVE_NUMBERS_LIMIT).toBe(20);
    expect(SAME_FAMILY_EMAILS_LIMIT).toBe(20);
    expect(DAILY_FAMILY_EMAILS_LIMIT).toBe(50);
  });
});

describe("hasConsecutiveRun", () => {
  it("triggers on exactly 20 consecutive numbers", () => {
    expect(hasConsecutiveRun(numbers(numberRange(20)))).toBe(true);
  });

  it("does not trigger on 19 consecutive numbers", () => {
    expect(hasConsecutiveRun(numbers(numberRange(19)))).toBe(false);
  });

  it("triggers whatever the order of the numbers in the request", () => {
    const list = shuffled(numberRange(20));
    expect(list).not.toEqual(numberRange(20));
    expect(hasConsecutiveRun(numbers(list))).toBe(true);
    expect(hasConsecutiveRun(numbers([...numberRange(20)].reverse()))).toBe(true);
  });

  it("recognises the same number in different spellings as one number", () => {
    const list = numberRange(20).map((n, i) => (i % 3 === 0 ? `001${n.slice(2)}` : i % 3 === 1 ? `${n.slice(0, 2)} ${n.slice(2, 5)}-${n.slice(5)}` : n));
    expect(hasConsecutiveRun(numbers(list))).toBe(true);
  });

  it("does not count a repeated number twice", () => {
    const list = [...numberRange(19), ...numberRange(19), "+12125551018"];
    expect(hasConsecutiveRun(numbers(list))).toBe(false);
  });

  it("needs an unbroken run", () => {
    const gap = [...numberRange(10), ...numberRange(10, 11)]; // …1000-1009 and …1011-1020
    expect(hasConsecutiveRun(numbers(gap))).toBe(false);
    expect(hasConsecutiveRun(numbers([...gap, "+12125551010"]))).toBe(true);
  });

  it("finds a run among unrelated numbers", () => {
    const list = ["+4915112345678", ...shuffled(numberRange(20, 500)), "+442071838750", "+12125551000"];
    expect(hasConsecutiveRun(numbers(list))).toBe(true);
  });

  it("ignores invalid numbers and e-mail rows", () => {
    const rows = prepareRows([...numberRange(19), "+999123", "not a number"], ["a1@example.org"]);
    expect(hasConsecutiveRun(rows)).toBe(false);
    expect(hasConsecutiveRun([])).toBe(false);
  });

  it("honours a custom limit", () => {
    expect(hasConsecutiveRun(numbers(numberRange(5)), 5)).toBe(true);
    expect(hasConsecutiveRun(numbers(numberRange(4)), 5)).toBe(false);
  });
});

describe("emailFamily", () => {
  it("puts addresses differing only by digits or separators in one family", () => {
    const family = emailFamily("john@example.org");
    for (const address of ["john.1@example.org", "john-2@example.org", "john3@example.org", "jo_hn+44@example.org", "JOHN.5@Example.ORG"]) {
      expect(emailFamily(address)).toBe(family);
    }
  });

  it("separates different local parts and different domains", () => {
    const family = emailFamily("john1@example.org");
    expect(emailFamily("jane1@example.org")).not.toBe(family);
    expect(emailFamily("johnny1@example.org")).not.toBe(family);
    expect(emailFamily("john1@example.net")).not.toBe(family);
  });

  it("never contains the address itself", () => {
    const family = emailFamily("john.smith1@example.org");
    expect(family).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(family).not.toContain("john");
    expect(family).not.toContain("example");
  });
});

describe("addressDigest", () => {
  it("is the same for the same address in any case and differs between addresses", () => {
    expect(addressDigest("John1@Example.org")).toBe(addressDigest("john1@example.org"));
    expect(addressDigest("john1@example.org")).not.toBe(addressDigest("john2@example.org"));
    expect(addressDigest("john1@example.org")).not.toContain("john");
  });
});

describe("keyedDigest", () => {
  it("depends on the secret and differs from the plain digest, so stored digests cannot be matched against a list of addresses", () => {
    const a = keyedDigest("secret-a");
    expect(addressDigest("john1@example.org", a)).toBe(addressDigest("John1@Example.org", a));
    expect(addressDigest("john1@example.org", a)).not.toBe(addressDigest("john1@example.org", keyedDigest("secret-b")));
    expect(addressDigest("john1@example.org", a)).not.toBe(addressDigest("john1@example.org"));
    expect(emailFamily("john.1@example.org", a)).toBe(emailFamily("john-2@example.org", a));
  });
});

describe("emailFamilies", () => {
  it("groups the request's addresses by family with their distinct members", () => {
    const families = emailFamilies(
      prepareRows(["+12125551000"], ["john1@example.org", "john2@example.org", "JOHN1@example.org", "jane@example.org", "bad@@example.org"]),
    );
    expect(families.size).toBe(2);
    expect(families.get(emailFamily("john@example.org"))?.size).toBe(2);
    expect(families.get(emailFamily("jane@example.org"))?.size).toBe(1);
  });
});

describe("hasLargeEmailFamily", () => {
  const family = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i));

  it("triggers on 20 addresses of one family", () => {
    expect(hasLargeEmailFamily(emailFamilies(emails(family(20, (i) => `john${i}@example.org`))))).toBe(true);
  });

  it("triggers whatever separators and digits vary", () => {
    const list = family(20, (i) => [`john.${i}`, `john-${i}`, `john_${i}`, `${i}john`][i % 4] + "@example.org");
    expect(hasLargeEmailFamily(emailFamilies(emails(list)))).toBe(true);
  });

  it("does not trigger on 19 addresses of one family", () => {
    expect(hasLargeEmailFamily(emailFamilies(emails(family(19, (i) => `john${i}@example.org`))))).toBe(false);
  });

  it("does not trigger on 20 different local parts on one domain", () => {
    const names = "alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter zoe".split(" ");
    expect(names).toHaveLength(20);
    expect(hasLargeEmailFamily(emailFamilies(emails(names.map((n) => `${n}@example.org`))))).toBe(false);
  });

  it("does not trigger on the same local part spread over 20 domains", () => {
    expect(hasLargeEmailFamily(emailFamilies(emails(family(20, (i) => `john${i}@example${i}.org`))))).toBe(false);
  });

  it("does not count an address twice, whatever its case", () => {
    const list = [...family(19, (i) => `john${i}@example.org`), "JOHN0@example.org", "john1@EXAMPLE.org"];
    expect(hasLargeEmailFamily(emailFamilies(emails(list)))).toBe(false);
  });

  it("ignores invalid addresses", () => {
    const list = [...family(19, (i) => `john${i}@example.org`), "john99@@example.org", "john98@example"];
    expect(hasLargeEmailFamily(emailFamilies(emails(list)))).toBe(false);
  });
});
