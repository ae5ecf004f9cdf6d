import { addressAllowed, canonicalAllowEntry, networkOf, normaliseAddress, parseAllowEntry } from "./ip-allowlist";

describe("parseAllowEntry and canonicalAllowEntry", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7/32"],
    [" 203.0.113.7 ", "203.0.113.7/32"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["10.1.2.3/8", "10.0.0.0/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["2001:db8::1", "2001:db8::1/128"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1/128"],
    ["[2001:db8::1]", "2001:db8::1/128"],
    ["2001:db8::/32", "2001:db8::/32"],
    ["2001:db8:1234:5678::9/48", "2001:db8:1234::/48"],
    ["::/0", "::/0"],
    ["::ffff:10.1.2.3", "10.1.2.3/32"],
    ["::ffff:10.0.0.0/104", "10.0.0.0/8"],
  ])("accepts %j and stores it as %j", (entry, canonical) => {
    expect(parseAllowEntry(entry)).not.toBeNull();
    expect(canonicalAllowEntry(entry)).toBe(canonical);
  });

  it("gives IPv4-mapped entries as IPv4 ranges", () => {
    const range = parseAllowEntry("::ffff:10.0.0.0/104");
    expect(range?.[0].kind()).toBe("ipv4");
    expect(range?.[1]).toBe(8);
  });

  it.each([
    "",
    "   ",
    "abc",
    "localhost",
    "10.0.0.256",
    "10.0.0.1.5",
    "10.0.0.0/33",
    "10.0.0.0/-1",
    "10.0.0.0/",
    "/8",
    "10.0.0.0/8/8",
    "10.0.0.0/x",
    "2001:db8::/129",
    "2001:db8:::1",
    "2001:db8::g",
    "10.0.0.1, 10.0.0.2",
    "10.0.0.1-10.0.0.9",
    // Shorthand, octal and hex forms decode to unexpected addresses (`010.1.2.3` is 8.1.2.3,
    // `10/8` is 0.0.0.0/8); an allowlist must refuse them rather than guard the wrong range.
    "10",
    "10/8",
    "1.2.3",
    "010.1.2.3",
    "10.0.0.010",
    "0x0a000001",
    "167772161",
  ])("refuses the malformed entry %j", (entry) => {
    expect(parseAllowEntry(entry)).toBeNull();
    expect(canonicalAllowEntry(entry)).toBeNull();
  });
});

describe("addressAllowed", () => {
  it("allows every address, and an unknown address, when the list is empty", () => {
    expect(addressAllowed("203.0.113.7", [])).toBe(true);
    expect(addressAllowed("2001:db8::1", [])).toBe(true);
    expect(addressAllowed(undefined, [])).toBe(true);
  });

  it("refuses an unknown or unparsable address once a list exists", () => {
    expect(addressAllowed(undefined, ["0.0.0.0/0"])).toBe(false);
    expect(addressAllowed("", ["0.0.0.0/0"])).toBe(false);
    expect(addressAllowed("not-an-ip", ["0.0.0.0/0", "::/0"])).toBe(false);
  });

  it("matches single IPv4 addresses exactly", () => {
    expect(addressAllowed("203.0.113.7", ["203.0.113.7"])).toBe(true);
    expect(addressAllowed("203.0.113.8", ["203.0.113.7"])).toBe(false);
  });

  it("matches IPv4 CIDR ranges up to their edges", () => {
    const list = ["198.51.100.0/24"];
    expect(addressAllowed("198.51.100.0", list)).toBe(true);
    expect(addressAllowed("198.51.100.255", list)).toBe(true);
    expect(addressAllowed("198.51.99.255", list)).toBe(false);
    expect(addressAllowed("198.51.101.0", list)).toBe(false);
  });

  it("matches IPv6 addresses and ranges", () => {
    expect(addressAllowed("2001:db8::1", ["2001:db8::1"])).toBe(true);
    expect(addressAllowed("2001:db8::2", ["2001:db8::1"])).toBe(false);
    expect(addressAllowed("2001:db8:ffff::1", ["2001:db8::/32"])).toBe(true);
    expect(addressAllowed("2001:db9::1", ["2001:db8::/32"])).toBe(false);
  });

  it("matches whatever the IPv6 spelling of the request address", () => {
    expect(addressAllowed("2001:0DB8:0000:0000:0000:0000:0000:0001", ["2001:db8::1"])).toBe(true);
    expect(addressAllowed("[2001:db8::1]", ["2001:db8::1"])).toBe(true);
    expect(addressAllowed("fe80::1%eth0", ["fe80::/10"])).toBe(true);
  });

  it("matches an IPv4-mapped IPv6 request address as its IPv4 address", () => {
    expect(addressAllowed("::ffff:10.1.2.3", ["10.0.0.0/8"])).toBe(true);
    expect(addressAllowed("::ffff:10.1.2.3", ["10.1.2.3"])).toBe(true);
    expect(addressAllowed("::ffff:11.1.2.3", ["10.0.0.0/8"])).toBe(false);
    expect(addressAllowed("::FFFF:0a01:0203", ["10.0.0.0/8"])).toBe(true);
  });

  it("never matches the deprecated IPv4-compatible form (::a.b.c.d) against IPv4 ranges", () => {
    expect(addressAllowed("::10.1.2.3", ["10.0.0.0/8"])).toBe(false);
    expect(addressAllowed("::10.1.2.3", ["10.1.2.3"])).toBe(false);
    expect(addressAllowed("[::10.1.2.3]", ["10.0.0.0/8"])).toBe(false);
    expect(addressAllowed("0:0:0:0:0:0:10.1.2.3", ["10.0.0.0/8"])).toBe(false);
    expect(addressAllowed("::127.0.0.1", ["127.0.0.0/8"])).toBe(false);
    // It is an IPv6 address: IPv6 entries that hold it match it, however it is spelt.
    expect(addressAllowed("::10.1.2.3", ["::a01:203"])).toBe(true);
    expect(addressAllowed("::a01:203", ["::10.1.2.3"])).toBe(true);
    expect(addressAllowed("::10.1.2.3", ["::/96"])).toBe(true);
    // The mapped form, with any spelling of the zero groups, stays an IPv4 caller.
    expect(addressAllowed("0:0:0:0:0:ffff:10.1.2.3", ["10.0.0.0/8"])).toBe(true);
    expect(addressAllowed("::0:ffff:10.1.2.3", ["10.0.0.0/8"])).toBe(true);
  });

  it("never reads an IPv4-compatible entry as an IPv4 range", () => {
    expect(canonicalAllowEntry("::10.1.2.3")).toBe("::a01:203/128");
    expect(canonicalAllowEntry("::10.0.0.0/104")).toBe("::a00:0/104");
    expect(addressAllowed("10.1.2.3", ["::10.0.0.0/104"])).toBe(false);
    expect(addressAllowed("10.1.2.3", ["::10.1.2.3"])).toBe(false);
    expect(parseAllowEntry("::10.1.2.256")).toBeNull();
    expect(parseAllowEntry("::10.1.2.256/120")).toBeNull();
  });

  it("matches an IPv4 request address against an IPv4-mapped entry", () => {
    expect(addressAllowed("10.1.2.3", ["::ffff:10.0.0.0/104"])).toBe(true);
    expect(addressAllowed("10.1.2.3", ["::ffff:10.1.2.3"])).toBe(true);
  });

  it("never lets an IPv4 address through an IPv6 range or the other way round", () => {
    expect(addressAllowed("10.1.2.3", ["::/0"])).toBe(false);
    expect(addressAllowed("2001:db8::1", ["0.0.0.0/0"])).toBe(false);
  });

  it("allows when any entry matches and skips malformed entries", () => {
    const list = ["garbage", "10.0.0.0/33", "192.0.2.0/24", "2001:db8::/32"];
    expect(addressAllowed("192.0.2.55", list)).toBe(true);
    expect(addressAllowed("2001:db8::5", list)).toBe(true);
    expect(addressAllowed("10.0.0.1", list)).toBe(false);
  });
});

describe("normaliseAddress", () => {
  it("unwraps IPv4-mapped IPv6 and leaves other addresses alone", () => {
    expect(normaliseAddress("::ffff:10.1.2.3")?.toString()).toBe("10.1.2.3");
    expect(normaliseAddress("::ffff:10.1.2.3")?.kind()).toBe("ipv4");
    expect(normaliseAddress("2001:db8::1")?.kind()).toBe("ipv6");
    expect(normaliseAddress("[2001:db8::1]")?.toString()).toBe("2001:db8::1");
    expect(normaliseAddress("nope")).toBeNull();
  });

  it("keeps the deprecated IPv4-compatible form an IPv6 address", () => {
    expect(normaliseAddress("::10.1.2.3")?.kind()).toBe("ipv6");
    expect(normaliseAddress("::10.1.2.3")?.toString()).toBe("::a01:203");
    expect(normaliseAddress("::10.1.2.3%eth0")?.toString()).toBe("::a01:203");
    expect(normaliseAddress("::ffff:0:10.1.2.3")?.kind()).toBe("ipv6"); // RFC 6145 translated, not mapped
    expect(normaliseAddress("::1.2.3.256")).toBeNull();
  });
});

describe("networkOf", () => {
  it("counts an IPv4 address on its own", () => {
    expect(networkOf("203.0.113.7")).toBe("203.0.113.7");
    expect(networkOf("203.0.113.8")).not.toBe(networkOf("203.0.113.7"));
  });

  it("counts IPv4-mapped IPv6 as the IPv4 address", () => {
    expect(networkOf("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts the IPv4-compatible form as IPv6 (its /64), never as the IPv4 address", () => {
    expect(networkOf("::203.0.113.7")).toBe("::/64");
    expect(networkOf("::203.0.113.7")).not.toBe(networkOf("203.0.113.7"));
  });

  it("groups IPv6 addresses by their /64", () => {
    const a = networkOf("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    expect(a).toBe("2001:db8:1:2::/64");
    expect(networkOf("2001:db8:1:2::1")).toBe(a);
    expect(networkOf("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe(a);
    expect(networkOf("2001:db8:1:3::1")).not.toBe(a);
  });

  it("gives one shared bucket for a missing or unparsable address", () => {
    expect(networkOf(undefined)).toBe("unknown");
    expect(networkOf("")).toBe("unknown");
    expect(networkOf("junk")).toBe("unknown");
  });
});
