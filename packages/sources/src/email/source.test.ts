import dgram from "node:dgram";
import net from "node:net";
import type { Answer } from "@svc/domain";
import { SourceError, type Identifier } from "../types";
import { isDisposableDomain } from "./disposable";
import { SmtpEmailSource, type SmtpEmailSourceOptions } from "./source";
import { FakeDnsServer, type ZoneEntry } from "./testing/fake-dns";
import { FakeSmtpServer } from "./testing/fake-smtp";

/*
 * End to end on loopback only: a hand-written DNS responder on 127.0.0.1 UDP and a
 * scriptable SMTP server on 127.0.0.1 TCP. Every MX host resolves to 127.0.0.1
 * (127.0.0.2 for a host where nothing listens); the source's SMTP port is the
 * local server's port. Nothing here reaches a real resolver or mail server.
 */

const MX = [{ preference: 10, exchange: "mx.local.test" }];
const ZONE: Record<string, ZoneEntry> = {
  "mx.local.test": { a: ["127.0.0.1"] },
  "dead.local.test": { a: ["127.0.0.2"] }, // loopback, but nothing listens there: connection refused
  "exists.test": { mx: MX },
  "legacy.test": { mx: MX },
  "catchall.test": { mx: MX },
  "grey.test": { mx: MX },
  "hang.test": { mx: MX },
  "policy.test": { mx: MX },
  "failover.test": {
    mx: [
      { preference: 20, exchange: "mx.local.test" },
      { preference: 10, exchange: "dead.local.test" },
    ],
  },
  "twoprimaries.test": {
    mx: [
      { preference: 10, exchange: "dead.local.test" },
      { preference: 10, exchange: "mx.local.test" },
    ],
  },
  "contoso.test": { mx: [{ preference: 0, exchange: "contoso-test.mail.protection.outlook.com" }] },
  "contoso-test.mail.protection.outlook.com": { a: ["127.0.0.1"] },
  "notm365.test": { mx: MX },
  "implicit.test": { a: ["127.0.0.1"] },
  "nullmx.test": { mx: [{ preference: 0, exchange: "." }] },
  "nomail.test": {},
  "ghostmx.test": { mx: [{ preference: 10, exchange: "ghost.local.test" }] },
  "servfail.test": { rcode: "SERVFAIL" },
  "silent.test": { silent: true },
  "mailinator.com": { mx: MX }, // a listed disposable domain, served by the local fake
};

/** Per-domain mailbox behaviour of the local SMTP server. */
function rcpt(address: string): string | null {
  const [local, domain] = address.split("@");
  switch (domain) {
    case "contoso.test":
    case "notm365.test":
      return local === "alice" ? "250 2.1.5 Recipient OK" : "550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT003.eop-nam12.prod.protection.outlook.com]";
    case "exists.test":
    case "twoprimaries.test":
    case "failover.test":
    case "implicit.test":
    case "mailinator.com":
      return local === "alice" ? "250 2.1.5 OK" : `550 5.1.1 <${address}>: Recipient address rejected: User unknown in virtual mailbox table`;
    case "legacy.test":
      return local === "alice" ? "250 OK" : "550 No such user here";
    case "catchall.test":
      return "250 2.1.5 OK";
    case "grey.test":
      return "451 4.7.1 <alice@grey.test>: Recipient address rejected: Greylisted, try again later";
    case "hang.test":
      return null;
    case "policy.test":
      return "550 5.7.1 Service unavailable; client host blocked using zen.spamhaus.org";
    default:
      return "550 5.1.2 unexpected domain";
  }
}

const dns = new FakeDnsServer(ZONE);
const smtp = new FakeSmtpServer();
let dnsServer: string;
let smtpPort: number;

beforeAll(async () => {
  dnsServer = await dns.start();
  smtpPort = await smtp.start();
});
afterAll(async () => {
  await smtp.stop();
  await dns.stop();
});
beforeEach(() => {
  smtp.reset({ rcpt });
  dns.queries.length = 0;
});
afterEach(async () => {
  await smtp.idle();
  expect(smtp.commands.filter((c) => /^(DATA|BDAT)\b/i.test(c))).toEqual([]);
});

function source(extra: Partial<SmtpEmailSourceOptions> = {}): SmtpEmailSource {
  return new SmtpEmailSource({
    heloName: "probe.svc.test",
    mailFrom: "verify@svc.test",
    dnsServers: [dnsServer],
    dnsTimeoutMs: 300,
    dnsTries: 1,
    smtpPort,
    connectTimeoutMs: 500,
    stepTimeoutMs: 500,
    deadlineMs: 5_000,
    allowPrivateAddresses: true,
    ...extra,
  });
}

const id = (email: string | null): Identifier => ({ e164: null, email, domain: email?.split("@")[1] ?? null, country: null, numberType: undefined });
const check = (email: string | null, extra: Partial<SmtpEmailSourceOptions> = {}, signal = new AbortController().signal) => source(extra).lookup(id(email), signal);

type Attrs = { catch_all?: boolean; disposable?: boolean; mx_found?: boolean; role_account?: boolean; free_provider?: boolean; did_you_mean?: string | null };
const ok = (registered: boolean | null, attrs: Attrs = {}): Answer => ({
  status: "ok",
  registered,
  attributes: { catch_all: false, disposable: false, mx_found: true, role_account: false, free_provider: false, did_you_mean: null, ...attrs },
});
const UNKNOWN: Answer = { status: "unknown", registered: null, attributes: null };
const INVALID: Answer = { status: "invalid", registered: null, attributes: null };
const NO_MAIL = ok(false, { mx_found: false });

async function sourceError(p: Promise<unknown>): Promise<SourceError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

describe("SmtpEmailSource", () => {
  it("is the smtp-probe route of the email check", () => {
    expect([source().route, source().check]).toEqual(["smtp-probe", "email"]);
  });

  it("mailbox exists: target accepted, random address rejected", async () => {
    await expect(check("alice@exists.test")).resolves.toEqual(ok(true));
    await smtp.idle();
    expect(smtp.sessions).toHaveLength(1);
    const commands = smtp.commands;
    expect(commands.slice(0, 3)).toEqual(["EHLO probe.svc.test", "MAIL FROM:<verify@svc.test>", "RCPT TO:<alice@exists.test>"]);
    expect(commands[3]).toMatch(/^RCPT TO:<[0-9a-f]{16}@exists\.test>$/);
    expect(commands.slice(4)).toEqual(["QUIT"]);
  });

  it("uses a different random address on every check", async () => {
    await check("alice@exists.test");
    await check("alice@exists.test");
    const randoms = smtp.commands.filter((c) => /^RCPT TO:<[0-9a-f]{16}@/.test(c));
    expect(randoms).toHaveLength(2);
    expect(randoms[0]).not.toBe(randoms[1]);
  });

  it("mailbox does not exist: 550 5.1.1 on the target", async () => {
    await expect(check("bob@exists.test")).resolves.toEqual(ok(false));
    expect(smtp.commands.filter((c) => c.startsWith("RCPT"))).toEqual(["RCPT TO:<bob@exists.test>"]);
  });

  it("reads a plain 550 without an enhanced status code as user unknown", async () => {
    await expect(check("bob@legacy.test")).resolves.toEqual(ok(false));
    await expect(check("alice@legacy.test")).resolves.toEqual(ok(true));
  });

  it("catch-all: target and random address both accepted is conclusive, registered null", async () => {
    await expect(check("anyone@catchall.test")).resolves.toEqual(ok(null, { catch_all: true }));
    expect(smtp.commands.filter((c) => c.startsWith("RCPT"))).toHaveLength(2);
  });

  it("greylisted (451) is unknown, and no other host is tried", async () => {
    await expect(check("alice@grey.test")).resolves.toEqual(UNKNOWN);
    expect(smtp.sessions).toHaveLength(1);
  });

  it("a policy rejection (5.7.1 blocklist) is unknown, not 'does not exist'", async () => {
    await expect(check("alice@policy.test")).resolves.toEqual(UNKNOWN);
  });

  it("a server that never answers RCPT is unknown after the step timeout", async () => {
    const started = Date.now();
    await expect(check("alice@hang.test", { stepTimeoutMs: 300 })).resolves.toEqual(UNKNOWN);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a server that never greets is unknown after the step timeout", async () => {
    smtp.reset({ rcpt, greeting: null });
    const started = Date.now();
    await expect(check("alice@exists.test", { stepTimeoutMs: 300 })).resolves.toEqual(UNKNOWN);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(smtp.sessions).toHaveLength(1);
  });

  it("the overall deadline cuts a slow dialogue short: unknown", async () => {
    // each reply takes 300 ms: under the step timeout, but the dialogue needs 1.5 s in all
    smtp.reset({ rcpt, replyDelayMs: 300 });
    const started = Date.now();
    await expect(check("alice@exists.test", { stepTimeoutMs: 1_000, deadlineMs: 500 })).resolves.toEqual(UNKNOWN);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1_200);
    // without the deadline the same server answers
    await expect(check("alice@exists.test", { stepTimeoutMs: 1_000, deadlineMs: 5_000 })).resolves.toEqual(ok(true));
  });

  it("connection refused on every host is unknown", async () => {
    await expect(check("alice@exists.test", { smtpPort: await closedTcpPort() })).resolves.toEqual(UNKNOWN);
  });

  it("a backup MX never decides: the primary refusing the connection is unknown, the backup is not even resolved", async () => {
    await expect(check("alice@failover.test")).resolves.toEqual(UNKNOWN);
    const hostQueries = dns.queries.filter((q) => q.name.endsWith(".local.test") && q.type === 1).map((q) => q.name);
    expect(hostQueries).toEqual(["dead.local.test"]);
    expect(smtp.sessions).toHaveLength(0);
  });

  it("every host sharing the lowest preference may answer, within maxConnections", async () => {
    await expect(check("alice@twoprimaries.test")).resolves.toEqual(ok(true));
    expect(smtp.sessions).toHaveLength(1);
    smtp.reset({ rcpt });
    await expect(check("alice@twoprimaries.test", { maxConnections: 1 })).resolves.toEqual(UNKNOWN);
    expect(smtp.sessions).toHaveLength(0);
  });

  it("Microsoft 365 directory-based edge blocking (550 5.4.1 Access denied AS(201806281)) means no such user", async () => {
    await expect(check("alice@contoso.test")).resolves.toEqual(ok(true));
    await expect(check("bob@contoso.test")).resolves.toEqual(ok(false));
    // The same reply from a server that is not Exchange Online is a routing/policy refusal: no verdict.
    await expect(check("bob@notm365.test")).resolves.toEqual(UNKNOWN);
  });

  it("a server that requires STARTTLS answers over TLS", async () => {
    smtp.reset({ rcpt, starttls: "require" });
    await expect(check("alice@exists.test")).resolves.toEqual(ok(true));
    await expect(check("bob@exists.test")).resolves.toEqual(ok(false));
    expect(smtp.sessions.every((s) => s.tls)).toBe(true);
  });

  it("coalesces concurrent checks of one domain: at most maxSessionsPerServer sessions at a time, several recipients each", async () => {
    smtp.reset({ rcpt, replyDelayMs: 30 }); // slow enough that every check is waiting before the first session ends
    const src = source();
    const addresses = Array.from({ length: 15 }, (_, i) => (i === 3 ? "alice@exists.test" : `user${i}@exists.test`));
    const answers = await Promise.all(addresses.map((a) => src.lookup(id(a), new AbortController().signal)));
    answers.forEach((a, i) => expect(a).toEqual(ok(i === 3 ? true : false)));
    expect(smtp.maxConcurrent.get("127.0.0.1")).toBeLessThanOrEqual(2);
    expect(smtp.sessions.length).toBeLessThanOrEqual(5);
    expect(smtp.commands.filter((c) => c.startsWith("RCPT")).length).toBe(16); // 15 targets + one catch-all probe
  });

  it("at most maxRcptsPerSession recipients per session", async () => {
    const src = source({ maxSessionsPerServer: 1, maxRcptsPerSession: 4 });
    const addresses = Array.from({ length: 9 }, (_, i) => `user${i}@exists.test`);
    await Promise.all(addresses.map((a) => src.lookup(id(a), new AbortController().signal)));
    expect(smtp.maxConcurrent.get("127.0.0.1")).toBe(1);
    for (const s of smtp.sessions) expect(s.commands.filter((c) => c.startsWith("RCPT")).length).toBeLessThanOrEqual(4);
  });

  it("backs off a server that says 421: the next checks open no session and are unknown", async () => {
    smtp.reset({ rcpt, greeting: "421 4.3.2 Service not available, closing transmission channel" });
    const src = source();
    await expect(src.lookup(id("alice@exists.test"), new AbortController().signal)).resolves.toEqual(UNKNOWN);
    smtp.reset({ rcpt });
    await expect(src.lookup(id("alice@exists.test"), new AbortController().signal)).resolves.toEqual(UNKNOWN);
    expect(smtp.sessions).toHaveLength(0);
    // Another source (another worker process) has no back-off; a short back-off ends.
    const brief = source({ backoffMs: 50 });
    smtp.reset({ rcpt, greeting: "421 4.7.0 Try again later" });
    await expect(brief.lookup(id("alice@exists.test"), new AbortController().signal)).resolves.toEqual(UNKNOWN);
    smtp.reset({ rcpt });
    await new Promise((r) => setTimeout(r, 80));
    await expect(brief.lookup(id("alice@exists.test"), new AbortController().signal)).resolves.toEqual(ok(true));
  });

  it("a check whose deadline runs out while waiting for a session is unknown", async () => {
    smtp.reset({ rcpt: () => null }); // the one allowed session hangs
    const src = source({ maxSessionsPerServer: 1, maxRcptsPerSession: 1, stepTimeoutMs: 1_000, deadlineMs: 300 });
    const both = await Promise.all([src.lookup(id("alice@exists.test"), new AbortController().signal), src.lookup(id("bob@exists.test"), new AbortController().signal)]);
    expect(both).toEqual([UNKNOWN, UNKNOWN]);
    expect(smtp.maxConcurrent.get("127.0.0.1")).toBe(1);
  });

  it("no MX but an A record: the domain itself is the mail host (implicit MX)", async () => {
    await expect(check("alice@implicit.test")).resolves.toEqual(ok(true));
    await expect(check("bob@implicit.test")).resolves.toEqual(ok(false));
    expect(dns.queries.filter((q) => q.name === "implicit.test").map((q) => q.type)).toEqual(expect.arrayContaining([15, 1, 28]));
  });

  it("null MX: the domain accepts no mail, no connection is made", async () => {
    await expect(check("alice@nullmx.test")).resolves.toEqual(NO_MAIL);
    expect(dns.queries).toEqual([{ name: "nullmx.test", type: 15 }]); // no address lookup, no implicit-MX fallback
    expect(smtp.sessions).toHaveLength(0);
  });

  it("NXDOMAIN: registered false, mx_found false", async () => {
    await expect(check("alice@nowhere.test")).resolves.toEqual(NO_MAIL);
    expect(dns.queries).toEqual([{ name: "nowhere.test", type: 15 }]);
  });

  it("neither MX nor address records: registered false, mx_found false", async () => {
    await expect(check("alice@nomail.test")).resolves.toEqual(NO_MAIL);
  });

  it("MX hosts that do not exist: registered false, mx_found false", async () => {
    await expect(check("alice@ghostmx.test")).resolves.toEqual(NO_MAIL);
    expect(smtp.sessions).toHaveLength(0);
  });

  it("DNS SERVFAIL is unknown", async () => {
    await expect(check("alice@servfail.test")).resolves.toEqual(UNKNOWN);
  });

  it("DNS timeout is unknown", async () => {
    const started = Date.now();
    await expect(check("alice@silent.test", { dnsTimeoutMs: 200 })).resolves.toEqual(UNKNOWN);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a DNS resolver that is not listening is a retryable SourceError (route problem, not the domain's)", async () => {
    const err = await sourceError(check("alice@exists.test", { dnsServers: [`127.0.0.1:${await closedUdpPort()}`] }));
    expect([err.kind, err.retryable]).toEqual(["unavailable", true]);
  });

  it("flags disposable domains, still answering whether the mailbox exists", async () => {
    await expect(check("alice@mailinator.com")).resolves.toEqual(ok(true, { disposable: true }));
    await expect(check("bob@mailinator.com")).resolves.toEqual(ok(false, { disposable: true }));
    expect(isDisposableDomain("mailinator.com")).toBe(true);
    expect(isDisposableDomain("Inbox.Mailinator.COM")).toBe(true);
    expect(isDisposableDomain("exists.test")).toBe(false);
    expect(isDisposableDomain("gmail.com")).toBe(false);
    expect(isDisposableDomain("com")).toBe(false);
  });

  it("invalid syntax is invalid, without any DNS query or connection", async () => {
    for (const bad of ["not-an-address", "a@@exists.test", "a b@exists.test", "alice@exists", "alice@127.0.0.1", "al\r\nDATA@exists.test", null]) {
      await expect(check(bad)).resolves.toEqual(INVALID);
    }
    expect(dns.queries).toEqual([]);
    expect(smtp.sessions).toHaveLength(0);
  });

  it("respects the caller's abort signal during SMTP: retryable timeout, connection closed", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const err = await sourceError(check("alice@hang.test", { stepTimeoutMs: 10_000, deadlineMs: 20_000 }, controller.signal));
    expect([err.kind, err.retryable]).toEqual(["timeout", true]);
    expect(Date.now() - started).toBeLessThan(1_000);
    await smtp.idle();
    expect(smtp.sessions).toHaveLength(1);
  });

  it("respects the caller's abort signal during DNS, and an already aborted signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const err = await sourceError(check("alice@silent.test", { dnsTimeoutMs: 5_000, deadlineMs: 20_000 }, controller.signal));
    expect(err.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_000);

    dns.queries.length = 0;
    const early = await sourceError(check("alice@exists.test", {}, AbortSignal.abort()));
    expect(early.kind).toBe("timeout");
    expect(dns.queries).toEqual([]);
  });

  it("falls back to HELO when the server refuses EHLO", async () => {
    smtp.reset({ rcpt, ehlo: "refuse" });
    await expect(check("alice@exists.test")).resolves.toEqual(ok(true));
    expect(smtp.commands.slice(0, 3)).toEqual(["EHLO probe.svc.test", "HELO probe.svc.test", "MAIL FROM:<verify@svc.test>"]);
  });

  it("by default never connects to loopback or private addresses an MX points at", async () => {
    await expect(check("alice@exists.test", { allowPrivateAddresses: false })).resolves.toEqual(UNKNOWN);
    expect(smtp.sessions).toHaveLength(0);
  });

  it("rejects configuration that could inject SMTP commands or is out of range", () => {
    expect(() => source({ heloName: "probe.svc.test\r\nDATA" })).toThrow(/heloName/);
    expect(() => source({ mailFrom: "a@b.test>\r\nDATA" })).toThrow(/mailFrom/);
    expect(() => source({ smtpPort: 0 })).toThrow(/smtpPort/);
    expect(() => source({ stepTimeoutMs: 0 })).toThrow(/stepTimeoutMs/);
    expect(() => source({ heloName: "[192.0.2.1]", mailFrom: "" })).not.toThrow();
  });
});

async function closedTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function closedUdpPort(): Promise<number> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
