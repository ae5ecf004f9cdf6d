import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

const DOTTED_TAIL = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * An IPv6 text whose last 32 bits are written as a dotted quad, with those bits
 * spelt as two hex groups instead. ipaddr.js (2.x) reads the deprecated
 * IPv4-compatible form `::a.b.c.d` as if it were the IPv4-mapped `::ffff:a.b.c.d`,
 * which would make `::10.1.2.3` an IPv4 caller; in hex it parses as the IPv6
 * address it is (`::a01:203`). Octets above 255 are left for the parser to refuse.
 */
function dottedTailAsHex(text: string): string {
  const m = DOTTED_TAIL.exec(text);
  if (!m) return text;
  const [a, b, c, d] = m.slice(2).map(Number) as [number, number, number, number];
  if (a > 255 || b > 255 || c > 255 || d > 255) return text;
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is treated as the IPv4 address it carries.
 * The deprecated IPv4-compatible form (`::1.2.3.4`, RFC 4291 2.5.5.1) is not: it
 * stays an IPv6 address and never matches IPv4 ranges.
 */
export function normaliseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const stripped = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const bare = stripped.includes(":") ? dottedTailAsHex(stripped) : stripped;
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
      const slash = text.indexOf("/");
      const head = text.slice(0, slash);
      const cidr = head.includes(":") ? `${dottedTailAsHex(head)}${text.slice(slash)}` : text;
      if (!ipaddr.isValidCIDR(cidr)) return null;
      const [addr, bits] = ipaddr.parseCIDR(cidr);
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
