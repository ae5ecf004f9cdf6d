import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is treated as the IPv4 address it carries. */
export function normaliseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare)) return null;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) return (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed;
}

/** Parses one allowlist entry (address or CIDR, IPv4 or IPv6) or returns null when malformed. */
export function parseAllowEntry(entry: string): Range | null {
  const text = entry.trim();
  // ipaddr.js also reads `10`, `1.2.3`, `010.1.2.3` (octal) and `0x0a000001` as IPv4
  // addresses; in an allowlist those are typos, not the address they happen to decode to.
  const address = (text.split("/")[0] as string).replace(/^\[|\]$/g, "");
  if (!address.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(address)) return null;
  try {
    if (text.includes("/")) {
      if (!ipaddr.isValidCIDR(text)) return null;
      const [addr, bits] = ipaddr.parseCIDR(text);
      if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
      }
      return [addr, bits];
    }
    const addr = normaliseAddress(text);
    if (!addr) return null;
    return [addr, addr.kind() === "ipv4" ? 32 : 128];
  } catch {
    return null;
  }
}

/** Canonical text of an entry for storage (`10.0.0.0/8`, `2001:db8::/32`). */
export function canonicalAllowEntry(entry: string): string | null {
  const range = parseAllowEntry(entry);
  if (!range) return null;
  const [addr, bits] = range;
  const network = addr.kind() === "ipv4"
    ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.toString()}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}

/** True when `address` falls in any entry; an empty list allows everyone. */
export function addressAllowed(address: string | undefined, entries: readonly string[]): boolean {
  if (entries.length === 0) return true;
  if (!address) return false;
  const addr = normaliseAddress(address);
  if (!addr) return false;
  for (const entry of entries) {
    const range = parseAllowEntry(entry);
    if (range && range[0].kind() === addr.kind() && addr.match(range)) return true;
  }
  return false;
}

/** The network an address counts against for per-network limits: IPv4 /32, IPv6 /64. */
export function networkOf(address: string | undefined): string {
  const addr = address ? normaliseAddress(address) : null;
  if (!addr) return "unknown";
  if (addr.kind() === "ipv4") return addr.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/64`).toString()}/64`;
}
