import { isDeliverableAddress, parseRanges } from "./address-policy";

// Every class the issue names, in each written form that reaches it.
const REFUSED: Array<[string, string]> = [
  ["10.0.0.1", "RFC 1918"],
  ["172.16.5.4", "RFC 1918"],
  ["172.31.255.255", "RFC 1918"],
  ["192.168.1.1", "RFC 1918"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local (cloud metadata)"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.127.255.254", "carrier-grade NAT"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.254", "benchmarking"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "this network"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.10", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["::1", "IPv6 loopback"],
  ["::", "IPv6 unspecified"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["fe80::1", "IPv6 link-local"],
  ["ff02::1", "IPv6 multicast"],
  ["2001:db8::1", "IPv6 documentation"],
  ["100::1", "IPv6 discard"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:10.1.2.3", "IPv4-mapped private"],
  ["::ffff:169.254.169.254", "IPv4-mapped link-local"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, hex form"],
  ["::a00:1", "IPv4-compatible (deprecated) 10.0.0.1"],
  ["::a9fe:a9fe", "IPv4-compatible (deprecated) 169.254.169.254"],
  ["::808:808", "IPv4-compatible (deprecated), even of a public address"],
  ["fec0::1", "IPv6 site-local (deprecated)"],
  ["64:ff9b::7f00:1", "NAT64 of loopback"],
  ["64:ff9b::a00:1", "NAT64 of 10.0.0.1"],
  ["64:ff9b::c0a8:101", "NAT64 of 192.168.1.1"],
  ["64:ff9b:1::a9fe:a9fe", "local-use NAT64 of 169.254.169.254"],
  ["64:ff9b:1:7f00:0:100:808:808", "local-use NAT64 /48 layout of 127.0.0.1 (public-looking tail)"],
  ["64:ff9b:1::808:808", "local-use NAT64, any address: the prefix length is unknown"],
  ["2002:7f00:1::1", "6to4 of loopback"],
  ["2002:c0a8:101::1", "6to4 of 192.168.1.1"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo of 127.0.0.1"],
  ["::127.0.0.1", "IPv4-compatible (deprecated)"],
  ["not-an-address", "not an address"],
];

const ALLOWED: Array<[string, string]> = [
  ["93.184.215.14", "public IPv4"],
  ["8.8.8.8", "public IPv4"],
  ["1.1.1.1", "public IPv4"],
  ["2606:4700:4700::1111", "public IPv6"],
  ["2a00:1450:4001:81c::200e", "public IPv6"],
  ["::ffff:8.8.8.8", "IPv4-mapped public"],
  ["64:ff9b::808:808", "NAT64 of 8.8.8.8"],
];

describe("webhook address policy", () => {
  test.each(REFUSED)("refuses %s (%s)", (address) => {
    expect(isDeliverableAddress(address)).toBe(false);
  });

  test.each(ALLOWED)("allows %s (%s)", (address) => {
    expect(isDeliverableAddress(address)).toBe(true);
  });

  test("the development setting allows only the listed ranges, in every written form", () => {
    const policy = { allowedPrivate: parseRanges(["127.0.0.0/8"]) };
    expect(isDeliverableAddress("127.0.0.1", policy)).toBe(true);
    expect(isDeliverableAddress("::ffff:127.0.0.1", policy)).toBe(true);
    expect(isDeliverableAddress("10.0.0.1", policy)).toBe(false);
    expect(isDeliverableAddress("::1", policy)).toBe(false);
    expect(isDeliverableAddress("169.254.169.254", policy)).toBe(false);
  });

  test("ranges that are not CIDR are refused", () => {
    expect(() => parseRanges(["127.0.0.1"])).toThrow(/CIDR/);
    expect(() => parseRanges(["localhost/8"])).toThrow(/CIDR/);
  });
});
