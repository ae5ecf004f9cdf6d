import { promises as dns } from "node:dns";

export type MxRecord = { exchange: string; priority: number };

/**
 * Why a lookup gave no records:
 * - `nxdomain`: the name does not exist (authoritative NXDOMAIN). Permanent.
 * - `temporary`: timeout, SERVFAIL, a malformed or truncated answer. Says nothing
 *   about the domain; asking again later may work.
 * - `unreachable`: the configured resolver itself cannot be used (nothing listens
 *   on its port, or it refuses to answer us). A problem on our side, not the domain's.
 * - `cancelled`: the caller's AbortSignal fired.
 * A name that exists but has no record of the asked type (NODATA) is not an error:
 * the methods return an empty list.
 */
export type DnsFailure = "nxdomain" | "temporary" | "unreachable" | "cancelled";

export class DnsError extends Error {
  constructor(
    readonly kind: DnsFailure,
    readonly code: string,
    readonly hostname: string,
  ) {
    super(`${kind} (${code}) for ${hostname}`);
    this.name = "DnsError";
  }

  /** The answer is final: the name does not exist. */
  get permanent(): boolean {
    return this.kind === "nxdomain";
  }
}

export type DnsResolverOptions = {
  /** Resolver addresses as accepted by `dns.setServers`: "127.0.0.1", "127.0.0.1:5353", "[::1]:53". Default: the system's resolvers. */
  servers?: readonly string[];
  /** Per-query timeout (c-ares doubles it on each retry). Default 5000 ms. */
  timeoutMs?: number;
  /** Attempts per query per server. Default 2. */
  tries?: number;
};

/**
 * The DNS lookups the e-mail check needs, over `node:dns` `promises.Resolver`
 * (c-ares, never the system's getaddrinfo) pointed at configurable servers.
 * Each call gets its own resolver channel, so an AbortSignal cancels exactly that
 * call (`Resolver.cancel()` cancels everything outstanding on a channel).
 */
export class DnsResolver {
  readonly servers: readonly string[];
  private readonly timeoutMs: number;
  private readonly tries: number;

  constructor(options: DnsResolverOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.tries = options.tries ?? 2;
    if (!(this.timeoutMs > 0) || !Number.isInteger(this.tries) || this.tries < 1) throw new Error("DNS timeout and tries must be positive");
    this.servers = options.servers && options.servers.length > 0 ? [...options.servers] : new dns.Resolver().getServers();
    this.channel(); // validates the server list now rather than on the first lookup
  }

  /**
   * MX records, lowest priority value first (equal priorities keep the resolver's
   * order). Host names are lower-cased without a trailing dot; a null MX
   * (RFC 7505, "0 .") has the exchange "". `[]` when the domain has no MX records.
   */
  async mx(domain: string, signal?: AbortSignal): Promise<MxRecord[]> {
    const records = await this.query(domain, signal, (r) => r.resolveMx(domain));
    return records
      .map((r, i) => ({ exchange: r.exchange.toLowerCase().replace(/\.$/, ""), priority: r.priority, i }))
      .sort((a, b) => a.priority - b.priority || a.i - b.i)
      .map(({ exchange, priority }) => ({ exchange, priority }));
  }

  /**
   * IPv4 then IPv6 addresses of a host. `[]` when it has neither. Throws `nxdomain`
   * when the name does not exist; throws `temporary` only when no address at all
   * could be found and one of the two queries failed temporarily.
   */
  async addresses(host: string, signal?: AbortSignal): Promise<string[]> {
    const [v4, v6] = await Promise.allSettled([
      this.query(host, signal, (r) => r.resolve4(host)),
      this.query(host, signal, (r) => r.resolve6(host)),
    ]);
    const failures = [v4, v6].flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    for (const kind of ["cancelled", "unreachable"] as const) {
      const err = failures.find((e) => e instanceof DnsError && e.kind === kind);
      if (err) throw err;
    }
    const found = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (found.length > 0) return found;
    const nx = failures.find((e) => e instanceof DnsError && e.kind === "nxdomain");
    if (nx) throw nx;
    const other = failures[0];
    if (other !== undefined) throw other;
    return [];
  }

  private channel(): dns.Resolver {
    const resolver = new dns.Resolver({ timeout: this.timeoutMs, tries: this.tries });
    resolver.setServers(this.servers as string[]);
    return resolver;
  }

  private async query<T>(name: string, signal: AbortSignal | undefined, run: (r: dns.Resolver) => Promise<T[]>): Promise<T[]> {
    if (signal?.aborted) throw new DnsError("cancelled", "ECANCELLED", name);
    const resolver = this.channel();
    const cancel = () => resolver.cancel();
    signal?.addEventListener("abort", cancel, { once: true });
    try {
      return await run(resolver);
    } catch (err) {
      const code = String((err as NodeJS.ErrnoException).code ?? "EUNKNOWN");
      if (code === dns.NODATA) return [];
      throw new DnsError(signal?.aborted || code === dns.CANCELLED ? "cancelled" : classify(code), code, name);
    } finally {
      signal?.removeEventListener("abort", cancel);
    }
  }
}

function classify(code: string): DnsFailure {
  if (code === dns.NOTFOUND) return "nxdomain";
  if (code === dns.CONNREFUSED || code === dns.REFUSED) return "unreachable";
  return "temporary";
}
