import { randomBytes } from "node:crypto";
import net from "node:net";
import { isDeliverableAddress, parseEmail, type Answer } from "@svc/domain";
import { SourceError, type Identifier, type Source } from "../types";
import { isDisposableDomain } from "./disposable";
import { DnsError, DnsResolver } from "./dns";
import { probeMailbox, type ProbeResult, type SmtpReply } from "./smtp";

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
 * Mail hosts: the MX records in priority order; no MX records at all means the
 * domain's own A/AAAA addresses (RFC 5321 implicit MX); a null MX (RFC 7505) means
 * the domain accepts no mail. Connection-level failures (refused, timeout, greeting
 * or EHLO/HELO or MAIL FROM refused) move on to the next address/host; the first
 * server that answers RCPT decides, because a lower-priority (backup) MX usually
 * accepts every recipient for later relay and would look like a catch-all.
 *
 * Answers (`ok` is conclusive and billed; `unknown` and `invalid` are free):
 * - target accepted (2xx), random address at the same domain rejected as unknown
 *   user: `ok`, registered true.
 * - target rejected as unknown user (see `classifyRcpt`): `ok`, registered false.
 * - target and random both accepted: catch-all domain, `ok`, registered null,
 *   catch_all true.
 * - the domain does not exist (NXDOMAIN), has a null MX, has neither MX nor
 *   address, or none of its MX hosts has an address: `ok`, registered false,
 *   mx_found false.
 * - syntax not accepted by `parseEmail`: `invalid`.
 * - everything else is `unknown`: greylisting and other 4xx, policy rejections
 *   (5.7.x, blocklists, "relay denied", MAIL FROM refused), timeouts, connection
 *   refused, DNS timeout/SERVFAIL, the deadline running out, a target accepted but
 *   the catch-all probe unanswered.
 * Attributes of an `ok` answer are always `{ catch_all, disposable, mx_found }`;
 * mx_found means a mail host to talk to was found (MX, or implicit MX via A/AAAA).
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
      attributes: { catch_all: catchAll, disposable, mx_found: mxFound },
    });
    const noMail = () => ok(false, false, false);

    const mx = await this.dns(() => this.resolver.mx(domain, signal));
    if (mx === "nxdomain") return noMail();
    if (mx === "temporary") return UNKNOWN;

    let hosts: Array<{ name: string; addresses: string[] | null }>;
    if (mx.length === 0) {
      const own = await this.dns(() => this.resolver.addresses(domain, signal));
      if (own === "temporary") return UNKNOWN;
      if (own === "nxdomain" || own.length === 0) return noMail();
      hosts = [{ name: domain, addresses: own }];
    } else {
      const real = mx.filter((r) => r.exchange !== "");
      if (real.length === 0) return noMail(); // null MX: "this domain accepts no mail"
      hosts = real.slice(0, MAX_MX_HOSTS).map((r) => ({ name: r.exchange, addresses: net.isIP(r.exchange) ? [r.exchange] : null }));
    }

    const target = `${local}@${domain}`;
    const random = `${randomBytes(8).toString("hex")}@${domain}`;
    let connections = 0;
    let addressFound = false;
    let inconclusive = false;
    for (const host of hosts) {
      let addresses = host.addresses;
      if (addresses === null) {
        const found = await this.dns(() => this.resolver.addresses(host.name, signal));
        if (found === "temporary") inconclusive = true;
        if (found === "temporary" || found === "nxdomain") continue;
        addresses = found;
      }
      for (const address of addresses) {
        addressFound = true;
        // The same address policy as webhooks: a domain's MX is chosen by whoever owns the domain.
        if (!this.allowPrivate && !isDeliverableAddress(address)) {
          inconclusive = true;
          continue;
        }
        if (connections >= this.maxConnections) return UNKNOWN;
        connections += 1;
        const result = await probeMailbox(address, target, random, {
          port: this.port,
          heloName: this.heloName,
          mailFrom: this.mailFrom,
          connectTimeoutMs: this.connectTimeoutMs,
          stepTimeoutMs: this.stepTimeoutMs,
          signal,
        });
        if (result.kind === "no_session") {
          inconclusive = true;
          continue;
        }
        return verdict(result, ok);
      }
    }
    // No MX host has an address at all: mail to this domain cannot be delivered.
    return inconclusive || addressFound ? UNKNOWN : noMail();
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

function verdict(result: Extract<ProbeResult, { kind: "rcpt" }>, ok: (registered: boolean | null, catchAll: boolean, mxFound: boolean) => Answer): Answer {
  const target = result.target ? classifyRcpt(result.target) : "no_answer";
  if (target === "no_such_user") return ok(false, false, true);
  if (target !== "accepted") return UNKNOWN;
  const random = result.random ? classifyRcpt(result.random) : "no_answer";
  if (random === "no_such_user") return ok(true, false, true);
  if (random === "accepted") return ok(null, true, true);
  return UNKNOWN;
}

const POLICY_WORDS =
  /spam|block|black ?list|\blisted (?:at|on|by)\b|\brbl\b|dnsbl|reputation|policy|relay|denied|not permitted|prohibited|banned|abuse|\bspf\b|dmarc|dkim|authenticat|starttls|\btls\b|\brate\b|too many|disabled|inactive|suspended|quota|\bfull\b|storage/i;

/**
 * What a RCPT reply says about the address:
 * - `accepted`: any 2xx (250, 251 will forward, 252 cannot verify but will accept).
 * - `no_such_user`: a permanent "address does not exist". With an enhanced status
 *   code, 5.1.x (bad mailbox, bad system, bad syntax, moved, null MX) except the
 *   sender-side 5.1.7/5.1.8. Without one, 550/551/553 whose text does not name a
 *   policy reason (blocklists, relaying, authentication, rate, quota, a disabled
 *   mailbox...).
 * - `temporary`: 4xx (greylisting, rate limits, mailbox busy).
 * - `refused`: every other 5xx (policy, 5.2.x mailbox full or disabled, 5.7.x):
 *   says nothing reliable about existence.
 */
export function classifyRcpt(reply: SmtpReply): "accepted" | "no_such_user" | "temporary" | "refused" {
  if (reply.code >= 200 && reply.code < 300) return "accepted";
  if (reply.code >= 400 && reply.code < 500) return "temporary";
  if (reply.code < 500 || reply.code >= 600) return "refused";
  if (reply.enhanced) {
    const [, subject, detail] = reply.enhanced.split(".");
    return subject === "1" && detail !== "7" && detail !== "8" ? "no_such_user" : "refused";
  }
  return [550, 551, 553].includes(reply.code) && !POLICY_WORDS.test(reply.lines.join(" ")) ? "no_such_user" : "refused";
}

