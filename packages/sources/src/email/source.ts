import { randomBytes } from "node:crypto";
import net from "node:net";
import { emailTraits, isDeliverableAddress, parseEmail, type Answer } from "@svc/domain";
import { SourceError, type Identifier, type Source } from "../types";
import { isDisposableDomain } from "./disposable";
import { DnsError, DnsResolver } from "./dns";
import { MxPool, type MxProbeAnswer, type MxServer } from "./mx-pool";
import { classifyRcpt, providerOf } from "./rcpt-rules";

export type SmtpEmailSourceOptions = {
  /** Name sent in EHLO/HELO; should be this host's public name with matching forward and reverse DNS. */
  heloName: string;
  /** Reverse path for MAIL FROM (an address of ours); "" sends the null reverse path `<>`. */
  mailFrom: string;
  /** Resolvers as "ip" or "ip:port" ("[ipv6]:port"); default: the system's resolvers. */
  dnsServers?: readonly string[];
  /** Per-query DNS timeout, default 5000 ms. */
  dnsTimeoutMs?: number;
  /** Attempts per DNS query per server, default 2. */
  dnsTries?: number;
  /** SMTP port, default 25. */
  smtpPort?: number;
  /** TCP connect timeout per mail server address, default 10 s. */
  connectTimeoutMs?: number;
  /** Timeout for each SMTP reply (greeting, EHLO, MAIL, RCPT), default 20 s. */
  stepTimeoutMs?: number;
  /**
   * Budget for the whole check (DNS plus every mail server tried), default 40 s;
   * when it runs out the answer is `unknown`. The runner's route timeout should be
   * longer, or the runner aborts first (a retryable SourceError, see below).
   */
  deadlineMs?: number;
  /** Mail server connections tried per check (MX hosts in priority order, each address), default 3. */
  maxConnections?: number;
  /**
   * Connect to loopback, private, link-local and other non-public addresses. Off by
   * default: an MX record must not make the service probe its own network. Tests
   * turn it on to reach their loopback servers.
   */
  allowPrivateAddresses?: boolean;
  /** Simultaneous SMTP sessions per mail server address across all checks of this source, default 2. */
  maxSessionsPerServer?: number;
  /** Recipients of one domain asked in one session (plus one catch-all probe), default 20. */
  maxRcptsPerSession?: number;
  /** No new session to a server for this long after it said 421 (or 4xx before RCPT), default 120 s. */
  backoffMs?: number;
  /** Upgrade sessions with STARTTLS when the server offers it, default true. */
  startTls?: boolean;
  /** A resolver to use instead of one built from the dns* options. */
  resolver?: DnsResolver;
};

const UNKNOWN: Answer = { status: "unknown", registered: null, attributes: null };
const INVALID: Answer = { status: "invalid", registered: null, attributes: null };
const MAX_MX_HOSTS = 10;

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const ADDRESS_LITERAL = /^\[(?:\d{1,3}(?:\.\d{1,3}){3}|IPv6:[0-9A-Fa-f:.]+)\]$/;

/**
 * `email` by asking the domain's mail server whether it would accept the address
 * (an SMTP "RCPT probe"). No message is ever sent: the dialogue stops after RCPT
 * and ends with QUIT, never DATA. Answers only whether the mailbox exists.
 *
 * Mail hosts: only the highest-priority MX may decide: the hosts sharing the
 * lowest preference value, each of their addresses in turn (up to maxConnections).
 * A lower-priority (backup) MX usually accepts every recipient for later relay, so
 * its "250" says nothing: when the primary refuses the connection, says 421, times
 * out or fails before RCPT, the answer is `unknown` (free), never a backup's verdict.
 * No MX records at all means the domain's own A/AAAA addresses (RFC 5321 implicit
 * MX); a null MX (RFC 7505) means the domain accepts no mail. Sessions go through
 * an MxPool (per-server session limit, several recipients per session, back-off).
 * RCPT replies are read with the table in rcpt-rules.ts (provider rules first).
 *
 * Answers (`ok` is conclusive and billed; `unknown` and `invalid` are free):
 * - target accepted (2xx), random address at the same domain rejected as unknown
 *   user: `ok`, registered true.
 * - target rejected as unknown user (see RCPT_RULES): `ok`, registered false.
 * - target and random both accepted: catch-all domain, `ok`, registered null,
 *   catch_all true.
 * - the domain does not exist (NXDOMAIN), has a null MX, has neither MX nor
 *   address, or none of its MX hosts has an address: `ok`, registered false,
 *   mx_found false.
 * - syntax not accepted by `parseEmail`: `invalid`.
 * - everything else is `unknown`: greylisting and other 4xx, policy rejections
 *   (5.7.x, blocklists, "relay denied", MAIL FROM refused), timeouts, connection
 *   refused, DNS timeout/SERVFAIL, the deadline running out (also while waiting for
 *   a session), a server backing off, a target accepted but the catch-all probe
 *   unanswered, a primary MX with no usable address while a backup has one.
 * Attributes of an `ok` answer are always `{ catch_all, disposable, mx_found,
 * role_account, free_provider, did_you_mean }`; mx_found means a mail host to talk
 * to was found (MX, or implicit MX via A/AAAA). The last three are `emailTraits`
 * (@svc/domain): they never change `registered` or billing.
 * `unknown` and `invalid` answers carry no attributes, like every other source.
 *
 * Unknown or SourceError? The runner counts every SourceError against the route's
 * circuit breaker and, once it opens, every e-mail check fails over to `unknown`
 * and the gateway reports the check as down. Problems of one domain's mail or DNS
 * servers (timeouts, refused connections, SERVFAIL, greylisting) must not do that:
 * a bulk list often holds many addresses on the same dead domain in a row, and a
 * quick retry would not change a greylisting answer anyway. So those are `unknown`
 * (free; the client may ask again later). A SourceError (retryable) is thrown only
 * when the problem is ours and affects every check: the configured DNS resolver
 * refuses or is not listening (`unavailable`), or the caller's AbortSignal fired
 * (`timeout`, like the other sources). A silent resolver is indistinguishable from
 * one slow domain and gives `unknown`; so does a blocked outbound port 25.
 */
export class SmtpEmailSource implements Source {
  readonly route = "smtp-probe";
  readonly check = "email" as const;

  private readonly resolver: DnsResolver;
  private readonly port: number;
  private readonly heloName: string;
  private readonly mailFrom: string;
  private readonly connectTimeoutMs: number;
  private readonly stepTimeoutMs: number;
  private readonly deadlineMs: number;
  private readonly maxConnections: number;
  private readonly allowPrivate: boolean;
  private readonly pool: MxPool;

  constructor(options: SmtpEmailSourceOptions) {
    if (!HOSTNAME.test(options.heloName) && !ADDRESS_LITERAL.test(options.heloName)) throw new Error("heloName must be a host name or an address literal");
    if (options.mailFrom !== "") {
      const from = parseEmail(options.mailFrom);
      if (!from.valid || from.email !== options.mailFrom.trim()) throw new Error("mailFrom must be a plain e-mail address or empty");
    }
    this.heloName = options.heloName;
    this.mailFrom = options.mailFrom.trim();
    this.port = options.smtpPort ?? 25;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.stepTimeoutMs = options.stepTimeoutMs ?? 20_000;
    this.deadlineMs = options.deadlineMs ?? 40_000;
    this.maxConnections = options.maxConnections ?? 3;
    this.allowPrivate = options.allowPrivateAddresses ?? false;
    if (!Number.isInteger(this.port) || this.port < 1 || this.port > 65_535) throw new Error("smtpPort must be a TCP port");
    for (const [name, v] of Object.entries({ connectTimeoutMs: this.connectTimeoutMs, stepTimeoutMs: this.stepTimeoutMs, deadlineMs: this.deadlineMs, maxConnections: this.maxConnections })) {
      if (!(v > 0)) throw new Error(`${name} must be positive`);
    }
    this.resolver =
      options.resolver ?? new DnsResolver({ servers: options.dnsServers, timeoutMs: options.dnsTimeoutMs, tries: options.dnsTries });
    this.pool = new MxPool({
      maxSessionsPerServer: options.maxSessionsPerServer ?? 2,
      maxRcptsPerSession: options.maxRcptsPerSession ?? 20,
      backoffMs: options.backoffMs ?? 120_000,
      randomLocal: () => randomBytes(8).toString("hex"),
      session: {
        port: this.port,
        heloName: this.heloName,
        mailFrom: this.mailFrom,
        connectTimeoutMs: this.connectTimeoutMs,
        stepTimeoutMs: this.stepTimeoutMs,
        startTls: options.startTls ?? true,
      },
    });
  }

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    const parsed = parseEmail(id.email ?? "");
    if (!parsed.valid) return INVALID;
    if (signal.aborted) throw new SourceError("timeout", true, "aborted before the check");
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.deadlineMs);
    try {
      return await this.verify(parsed.local, parsed.domain, AbortSignal.any([signal, deadline.signal]));
    } catch (err) {
      if (signal.aborted) throw new SourceError("timeout", true, "aborted by the caller");
      if (deadline.signal.aborted) return UNKNOWN;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private async verify(local: string, domain: string, signal: AbortSignal): Promise<Answer> {
    const disposable = isDisposableDomain(domain);
    const ok = (registered: boolean | null, catchAll: boolean, mxFound: boolean): Answer => ({
      status: "ok",
      registered,
      // role_account, free_provider, did_you_mean: the domain's rules; the MX answer decides whether a typo is suggested.
      attributes: { catch_all: catchAll, disposable, mx_found: mxFound, ...emailTraits(local, domain, mxFound) },
    });
    const servers = await this.primaryServers(domain, signal);
    if (servers === "no_mail") return ok(false, false, false);
    if (servers === "unknown") return UNKNOWN;
    const answer = await this.pool.probe({ domain, local, servers: servers.slice(0, this.maxConnections), signal });
    return verdict(answer, ok);
  }

  /**
   * The addresses of the domain's highest-priority MX hosts (the lowest preference
   * value; every host sharing it, in the resolver's order), or of the domain itself
   * without MX records. "no_mail" when the domain cannot receive mail at all;
   * "unknown" when the primary cannot be asked (DNS trouble, only private addresses,
   * or a primary without addresses while a backup has some).
   */
  private async primaryServers(domain: string, signal: AbortSignal): Promise<MxServer[] | "no_mail" | "unknown"> {
    const mx = await this.dns(() => this.resolver.mx(domain, signal));
    if (mx === "nxdomain") return "no_mail";
    if (mx === "temporary") return "unknown";

    let primary: string[];
    let backups: string[] = [];
    if (mx.length === 0) {
      primary = [domain];
    } else {
      const real = mx.filter((r) => r.exchange !== "").slice(0, MAX_MX_HOSTS);
      if (real.length === 0) return "no_mail"; // null MX: "this domain accepts no mail"
      const top = Math.min(...real.map((r) => r.priority));
      primary = real.filter((r) => r.priority === top).map((r) => r.exchange);
      backups = real.filter((r) => r.priority !== top).map((r) => r.exchange);
    }

    const resolved = await this.resolveHosts(primary, signal);
    if (resolved.servers.length === 0) {
      if (resolved.temporary) return "unknown";
      // No primary host has an address: deliverable only through a backup, which cannot say whether the mailbox exists.
      const backup = await this.resolveHosts(backups, signal);
      return backup.servers.length > 0 || backup.temporary ? "unknown" : "no_mail";
    }
    // The same address policy as webhooks: a domain's MX is chosen by whoever owns the domain.
    const usable = resolved.servers.filter((s) => this.allowPrivate || isDeliverableAddress(s.address));
    return usable.length > 0 ? usable : "unknown";
  }

  private async resolveHosts(hosts: readonly string[], signal: AbortSignal): Promise<{ servers: MxServer[]; temporary: boolean }> {
    const servers: MxServer[] = [];
    let temporary = false;
    for (const host of hosts) {
      if (net.isIP(host)) {
        servers.push({ address: host, host });
        continue;
      }
      const found = await this.dns(() => this.resolver.addresses(host, signal));
      if (found === "temporary") temporary = true;
      else if (found !== "nxdomain") for (const address of found) if (!servers.some((s) => s.address === address)) servers.push({ address, host });
    }
    return { servers, temporary };
  }

  /** DNS outcome: records, a permanent "nxdomain", or "temporary"; a resolver we cannot use is a SourceError. */
  private async dns<T>(run: () => Promise<T>): Promise<T | "nxdomain" | "temporary"> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof DnsError)) throw err;
      if (err.kind === "nxdomain") return "nxdomain";
      if (err.kind === "temporary") return "temporary";
      if (err.kind === "unreachable") throw new SourceError("unavailable", true, `DNS resolver unusable (${err.code})`);
      throw err; // cancelled: lookup() tells the caller's abort from the deadline
    }
  }
}

function verdict(answer: MxProbeAnswer, ok: (registered: boolean | null, catchAll: boolean, mxFound: boolean) => Answer): Answer {
  if (answer.kind === "no_session") return UNKNOWN;
  const provider = providerOf(answer.server.host);
  const target = answer.target ? classifyRcpt(answer.target, provider) : "no_answer";
  if (target === "no_such_user") return ok(false, false, true);
  if (target !== "accepted") return UNKNOWN;
  const random = answer.random ? classifyRcpt(answer.random, provider) : "no_answer";
  if (random === "no_such_user") return ok(true, false, true);
  if (random === "accepted") return ok(null, true, true);
  return UNKNOWN;
}
