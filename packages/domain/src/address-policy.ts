import ipaddr from "ipaddr.js";

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * ipaddr.js range names that are not the public internet. IPv4: private (RFC
 * 1918), loopback, link-local, carrier-grade NAT (100.64/10), benchmarking
 * (198.18/15, inside "reserved"), multicast, broadcast, unspecified, and the rest
 * of "reserved" (documentation nets, 240/4, 0/8). IPv6: unique-local, link-local,
 * loopback, multicast, unspecified, reserved (documentation 2001:db8::/32), discard.
 */
const NOT_PUBLIC = new Set([
  "unspecified",
  "broadcast",
  "multicast",
  "linkLocal",
  "loopback",
  "carrierGradeNat",
  "private",
  "reserved",
  "uniqueLocal",
  "benchmarking",
  "discard",
  "amt",
  "as112",
  "deprecated",
  "orchid2",
  "droneRemoteIdProtocolEntityTags",
]);

/** IPv4 addresses carried inside an IPv6 one: mapped, NAT64, 6to4, Teredo (client). */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = v6.toByteArray();
  const v4 = (o: number) => new ipaddr.IPv4(bytes.slice(o, o + 4) as [number, number, number, number]);
  const found: ipaddr.IPv4[] = [];
  if (v6.isIPv4MappedAddress()) found.push(v6.toIPv4Address());
  const range = v6.range();
  if (range === "rfc6052") found.push(v4(12)); // NAT64, well-known /96
  if (range === "6to4") found.push(v4(2));
  if (range === "teredo") found.push(new ipaddr.IPv4(bytes.slice(12, 16).map((b) => b ^ 0xff) as [number, number, number, number]));
  return found;
}

export type AddressPolicy = {
  /** Development and tests only: ranges allowed although not public (e.g. 127.0.0.0/8). */
  allowedPrivate?: ReadonlyArray<[Addr, number]>;
};

export function parseRanges(cidrs: readonly string[]): Array<[Addr, number]> {
  return cidrs.map((c) => {
    if (!ipaddr.isValidCIDR(c)) throw new Error(`not a CIDR range: ${c}`);
    return ipaddr.parseCIDR(c);
  });
}

function allowedByPolicy(addr: Addr, policy: AddressPolicy): boolean {
  return (policy.allowedPrivate ?? []).some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}

/**
 * True when the service may connect to `address` (a literal IPv4 or IPv6 address)
 * on a customer's or a stranger's behalf: webhook endpoints, mail servers found in DNS.
 */
export function isDeliverableAddress(address: string, policy: AddressPolicy = {}): boolean {
  if (!ipaddr.isValid(address)) return false;
  const addr = ipaddr.parse(address);
  if (allowedByPolicy(addr, policy)) return true;
  if (addr.kind() === "ipv4") return !NOT_PUBLIC.has(addr.range());
  const v6 = addr as ipaddr.IPv6;
  // Local-use NAT64 (RFC 8215) places the IPv4 address by prefix length, which the
  // address alone does not tell: the whole /48 is refused.
  if (v6.match(LOCAL_NAT64, 48)) return false;
  const inner = embeddedIPv4(v6);
  if (inner.length > 0) return inner.every((v4) => allowedByPolicy(v4, policy) || !NOT_PUBLIC.has(v4.range()));
  // Only global unicast (2000::/3): ipaddr.js calls the deprecated IPv4-compatible
  // ::/96 and site-local fec0::/10 "unicast" too, and both can reach internal IPv4.
  return v6.range() === "unicast" && v6.match(GLOBAL_UNICAST, 3);
}

const GLOBAL_UNICAST = ipaddr.IPv6.parse("2000::");
const LOCAL_NAT64 = ipaddr.IPv6.parse("64:ff9b:1::");
