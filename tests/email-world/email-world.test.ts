import { reconcileAccount } from "@svc/store";
import { FakeDnsServer, type ZoneEntry } from "../../packages/sources/src/email/testing/fake-dns";
import { FakeSmtpServer, type SmtpScript } from "../../packages/sources/src/email/testing/fake-smtp";
import { accountWithKey, bearer } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually } from "../support/live";
import { routesKey } from "@svc/sources";

/**
 * A local e-mail world: an authoritative DNS server and scripted SMTP servers on
 * loopback sockets, the fleet's check-worker pointed at them (SMTP_HELO_NAME,
 * DNS_SERVERS, SMTP_PORT, SMTP_ALLOW_PRIVATE_ADDRESSES). Every mail host listens on
 * its own loopback address with the one SMTP port (Linux routes all of 127/8 to
 * lo), so the fake server knows which host a session is for. Each behaviour of
 * the live `email` check goes through the gateway with a live key and the real
 * billing-ledger, and the balance must be exact at the end.
 */

const HOST = {
  main: "127.0.0.1", // ordinary mail server for many domains (rules per domain)
  dead: "127.0.0.2", // nothing listens: connection refused
  banner421: "127.0.0.3",
  relay: "127.0.0.4", // store-and-forward backup: 250 to everyone
  tarpit: "127.0.0.5", // never greets
  drop: "127.0.0.6", // drops the connection at RCPT
  tls: "127.0.0.7", // requires STARTTLS
  m365: "127.0.0.8",
  gmail: "127.0.0.9",
  yahoo: "127.0.0.10",
  hotmail: "127.0.0.11",
  busy: "127.0.0.12", // many addresses, slow, 452 after 4 recipients
  helo: "127.0.0.13", // refuses EHLO
  sender: "127.0.0.14", // refuses our MAIL FROM
  hang: "127.0.0.15", // never answers RCPT
  v6: "::1",
} as const;

const LISTEN = Object.values(HOST).filter((h) => h !== HOST.dead);

const mx = (exchange: string, preference = 10) => ({ preference, exchange });

const ZONE: Record<string, ZoneEntry> = {
  "mx.world.example": { a: [HOST.main] },
  "dead.mx.world.example": { a: [HOST.dead] },
  "banner421.mx.world.example": { a: [HOST.banner421] },
  "relay.mx.world.example": { a: [HOST.relay] },
  "tarpit.mx.world.example": { a: [HOST.tarpit] },
  "drop.mx.world.example": { a: [HOST.drop] },
  "tls.mx.world.example": { a: [HOST.tls] },
  "busy.mx.world.example": { a: [HOST.busy] },
  "helo.mx.world.example": { a: [HOST.helo] },
  "sender.mx.world.example": { a: [HOST.sender] },
  "hang.mx.world.example": { a: [HOST.hang] },
  "v6.mx.world.example": { aaaa: [HOST.v6] },
  "contoso-com.mail.protection.outlook.com": { a: [HOST.m365] },
  "gmail-smtp-in.l.google.com": { a: [HOST.gmail] },
  "mta5.am0.yahoodns.net": { a: [HOST.yahoo] },
  "hotmail-com.olc.protection.outlook.com": { a: [HOST.hotmail] },

  "corp.example": { mx: [mx("mx.world.example")] },
  "legacy.example": { mx: [mx("mx.world.example")] },
  "catchall.example": { mx: [mx("mx.world.example")] },
  "grey.example": { mx: [mx("mx.world.example")] },
  "policy.example": { mx: [mx("mx.world.example")] },
  "mailinator.com": { mx: [mx("mx.world.example")] },
  "implicit.example": { a: [HOST.main] },
  "nullmx.example": { mx: [mx(".", 0)] },
  "nomail.example": {},
  "ghostmx.example": { mx: [mx("ghost.mx.world.example")] },
  "servfail.example": { rcode: "SERVFAIL" },
  "silent.example": { silent: true },
  "refused.example": { mx: [mx("dead.mx.world.example")] },
  "banner.example": { mx: [mx("banner421.mx.world.example")] },
  "tarpit.example": { mx: [mx("tarpit.mx.world.example")] },
  "drop.example": { mx: [mx("drop.mx.world.example")] },
  "ipv6.example": { mx: [mx("v6.mx.world.example")] },
  "helo.example": { mx: [mx("helo.mx.world.example")] },
  "sender.example": { mx: [mx("sender.mx.world.example")] },
  "hang.example": { mx: [mx("hang.mx.world.example")] },
  // The primary refuses the connection / says 421; a backup relay would accept anyone.
  "backup.example": { mx: [mx("relay.mx.world.example", 20), mx("dead.mx.world.example", 10)] },
  "backup421.example": { mx: [mx("banner421.mx.world.example", 5), mx("relay.mx.world.example", 50)] },
  // Two hosts share the top preference: the refused one, then the working one.
  "twoprimaries.example": { mx: [mx("dead.mx.world.example", 10), mx("mx.world.example", 10), mx("relay.mx.world.example", 20)] },
  "contoso.com": { mx: [mx("contoso-com.mail.protection.outlook.com", 0)] },
  "gmail.com": { mx: [mx("gmail-smtp-in.l.google.com", 5), mx("relay.mx.world.example", 40)] },
  "yahoo.com": { mx: [mx("mta5.am0.yahoodns.net", 1)] },
  "hotmail.com": { mx: [mx("hotmail-com.olc.protection.outlook.com", 2)] },
  "tls.example": { mx: [mx("tls.mx.world.example")] },
  "many.example": { mx: [mx("busy.mx.world.example")] },
};

const EXISTING = new Set(["alice", "postmaster", "info", "carol", "user3", "user11"]);

/** The ordinary server's answers, per domain. */
function mainRcpt(address: string): string | null {
  const [local = "", domain] = address.split("@");
  const exists = EXISTING.has(local);
  switch (domain) {
    case "legacy.example":
      return exists ? "250 OK" : "550 No such user here";
    case "catchall.example":
      return "250 2.1.5 OK";
    case "grey.example":
      return "451 4.7.1 <alice@grey.example>: Recipient address rejected: Greylisted, try again later";
    case "policy.example":
      return "550 5.7.1 Service unavailable; client host [127.0.0.1] blocked using zen.spamhaus.org";
    default:
      if (local === "full") return "552 5.2.2 <full@corp.example>: Mailbox full";
      return exists ? "250 2.1.5 Recipient OK" : `550 5.1.1 <${address}>: Recipient address rejected: User unknown in virtual mailbox table`;
  }
}

const local = (address: string) => address.split("@")[0] ?? "";

const SCRIPTS: Record<string, Partial<SmtpScript>> = {
  [HOST.banner421]: { greeting: "421 4.3.2 Service not available, closing transmission channel" },
  [HOST.relay]: { rcpt: () => "250 2.1.5 Recipient ok, queued for relay" },
  [HOST.tarpit]: { greeting: null },
  [HOST.drop]: { rcpt: () => "<drop>" },
  [HOST.tls]: { starttls: "require" },
  [HOST.m365]: {
    starttls: "offer",
    rcpt: (a) => (EXISTING.has(local(a)) ? "250 2.1.5 Recipient OK" : "550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT003.eop-nam12.prod.protection.outlook.com]"),
  },
  [HOST.gmail]: {
    starttls: "offer",
    rcpt: (a) => {
      if (local(a) === "closed") return "550-5.2.1 The email account that you tried to reach is disabled. Learn more at\r\n550 5.2.1 https://support.google.com/mail/?p=DisabledUser a1si123 - gsmtp";
      if (local(a) === "popular") return "450-4.2.1 The user you are trying to contact is receiving mail at a rate that\r\n450-4.2.1 prevents additional messages from being delivered. Please resend your\r\n450 4.2.1 message at a later point. a1si123 - gsmtp";
      if (EXISTING.has(local(a))) return "250 2.1.5 OK a1si123 - gsmtp";
      return "550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n550-5.1.1 double-checking the recipient's email address for typos or\r\n550-5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser\r\n550 5.1.1 a1si123 - gsmtp";
    },
  },
  [HOST.yahoo]: {
    rcpt: (a) => (EXISTING.has(local(a)) ? "250 recipient <ok>" : `554 delivery error: dd This user doesn't have a yahoo.com account (${a}) [0] - mta4013.mail.bf1.yahoo.com`),
  },
  [HOST.hotmail]: {
    rcpt: (a) => (EXISTING.has(local(a)) ? "250 2.1.5 Recipient OK" : "550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [DM6NAM12FT035.eop-nam12.prod.protection.outlook.com]"),
  },
  [HOST.busy]: { replyDelayMs: 30, maxRcptsPerTransaction: 4 },
  [HOST.helo]: { ehlo: "refuse" },
  [HOST.sender]: { mailFrom: "553 5.7.1 <probe@validation.test>: Sender address rejected: not accepted here" },
  [HOST.hang]: { rcpt: () => null },
};

type Expect = { status: string; registered: boolean | null; attributes: Record<string, boolean | string | null> | null; billed: boolean };
const attrs = (a: { catch_all?: boolean; disposable?: boolean; mx_found?: boolean; role_account?: boolean; free_provider?: boolean } = {}) => ({
  catch_all: false,
  disposable: false,
  mx_found: true,
  role_account: false,
  free_provider: false,
  did_you_mean: null,
  ...a,
});
const exists: Expect = { status: "ok", registered: true, attributes: attrs(), billed: true };
const missing: Expect = { status: "ok", registered: false, attributes: attrs(), billed: true };
const noMail: Expect = { status: "ok", registered: false, attributes: attrs({ mx_found: false }), billed: true };
/** `nobody` is a role name (the Unix account) on the role list; gmail.com, yahoo.com and hotmail.com are free providers. */
const with_ = (e: Expect, a: Parameters<typeof attrs>[0]): Expect => ({ ...e, attributes: attrs({ ...(e.attributes as object), ...a }) });
const unknown: Expect = { status: "unknown", registered: null, attributes: null, billed: false };

const MANY = Array.from({ length: 15 }, (_, i) => `user${i}@many.example`);

/** Address → what the live check must answer (one behaviour each). */
const CASES: Record<string, Expect> = {
  // mailboxes on an ordinary server
  "alice@corp.example": exists,
  "nobody@corp.example": with_(missing, { role_account: true }),
  "postmaster@corp.example": { ...exists, attributes: attrs({ role_account: true }) }, // role accounts are mailboxes like any other
  "info@corp.example": { ...exists, attributes: attrs({ role_account: true }) },
  "full@corp.example": unknown, // 552 5.2.2 mailbox full: says nothing about existence
  "alice@legacy.example": exists, // no enhanced status codes
  "nobody@legacy.example": with_(missing, { role_account: true }), // plain "550 No such user here"
  "anyone@catchall.example": { status: "ok", registered: null, attributes: attrs({ catch_all: true }), billed: true },
  "alice@grey.example": unknown, // greylisting (451 4.7.1)
  "alice@policy.example": unknown, // 5.7.1 blocklist
  "alice@mailinator.com": { ...exists, attributes: attrs({ disposable: true }) },
  "nobody@mailinator.com": with_(missing, { disposable: true, role_account: true }),
  // DNS
  "alice@implicit.example": exists, // no MX: the domain's A record (implicit MX)
  "anyone@nullmx.example": noMail, // RFC 7505 null MX
  "anyone@dead-domain.example": noMail, // NXDOMAIN
  "anyone@nomail.example": noMail, // neither MX nor address
  "anyone@ghostmx.example": noMail, // the only MX host does not exist
  "anyone@servfail.example": unknown,
  "anyone@silent.example": unknown, // the resolver never answers
  "alice@ipv6.example": exists, // IPv6-only MX (::1)
  // connection-level trouble
  "alice@refused.example": unknown, // connection refused
  "alice@banner.example": unknown, // 421 at the banner
  "alice@tarpit.example": unknown, // never greets
  "alice@drop.example": unknown, // connection dropped at RCPT
  "alice@hang.example": unknown, // RCPT never answered
  "alice@helo.example": exists, // EHLO refused: HELO
  "alice@sender.example": unknown, // MAIL FROM refused
  // issue 13, item 1: a backup relay is not a catch-all
  "alice@backup.example": unknown, // primary refuses the connection
  "nobody@backup421.example": unknown, // primary says 421 at the banner
  "alice@twoprimaries.example": exists, // hosts sharing the top preference may answer
  // item 2: provider rules
  "alice@contoso.com": exists, // M365: the random address gets 5.4.1, so the mailbox exists
  "nobody@contoso.com": with_(missing, { role_account: true }), // M365 directory-based edge blocking
  "alice@gmail.com": with_(exists, { free_provider: true }),
  "nobody@gmail.com": with_(missing, { free_provider: true, role_account: true }), // Gmail's multi-line 5.1.1
  "closed@gmail.com": with_(missing, { free_provider: true }), // Gmail 5.2.1 disabled account
  "popular@gmail.com": with_(exists, { free_provider: true }), // Gmail 4.2.1 receiving at a rate: exists
  "alice@yahoo.com": with_(exists, { free_provider: true }),
  "nobody@yahoo.com": with_(missing, { free_provider: true, role_account: true }), // 554 doesn't have a yahoo.com account
  "alice@hotmail.com": with_(exists, { free_provider: true }),
  "nobody@hotmail.com": with_(missing, { free_provider: true, role_account: true }), // 550 5.5.0 mailbox unavailable
  // item 3: STARTTLS required
  "alice@tls.example": exists,
  "nobody@tls.example": with_(missing, { role_account: true }),
  // item 3: many addresses of one domain
  ...Object.fromEntries(MANY.map((a) => [a, EXISTING.has(local(a)) ? exists : missing])),
};

describe("the local e-mail world: every behaviour of the live email check", () => {
  let gw: TestGateway;
  let dns: FakeDnsServer;
  let smtp: FakeSmtpServer;
  let worker: RunningService;
  let ledger: RunningService;

  beforeAll(async () => {
    smtp = new FakeSmtpServer();
    smtp.reset({ rcpt: mainRcpt });
    const smtpPort = await smtp.start(LISTEN);
    for (const [host, script] of Object.entries(SCRIPTS)) smtp.host(host, script);
    dns = new FakeDnsServer(ZONE);
    const [gateway, dnsServer] = await Promise.all([startTestGateway(), dns.start()]);
    gw = gateway;
    [worker, ledger] = await Promise.all([
      startService("check-worker", gw.env, {
        SMTP_HELO_NAME: "probe.validation.test",
        SMTP_MAIL_FROM: "probe@validation.test",
        SMTP_PORT: String(smtpPort),
        DNS_SERVERS: dnsServer,
        DNS_TIMEOUT_MS: "300",
        SMTP_ALLOW_PRIVATE_ADDRESSES: "true",
        // Timeouts far above a loopback reply even on a loaded 2-core machine (a TLS
        // handshake or a busy worker can take a second), yet short enough that the
        // tarpit and hanging servers end inside the lookup's wait.
        SMTP_CONNECT_TIMEOUT_MS: "3000",
        SMTP_STEP_TIMEOUT_MS: "4000",
        SMTP_DEADLINE_MS: "20000",
        SMTP_MAX_SESSIONS_PER_MX: "2",
        SMTP_MAX_RCPTS_PER_SESSION: "20",
      }),
      startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "500" }),
    ]);
    await eventually(async () => {
      const routes = await gw.deps.redis.get(routesKey(gw.env.redisPrefix, "email"));
      return routes && routes !== "[]" ? routes : undefined;
    }, 15_000, "email route advertised");
  }, 60_000);
  afterAll(async () => {
    await Promise.all([worker?.stop(), ledger?.stop()]);
    await smtp?.stop();
    await dns?.stop();
    await gw?.close();
  });

  let key: Awaited<ReturnType<typeof accountWithKey>>;
  let got: Record<string, Record<string, unknown>>;
  const lookup = async (emails: string[]) => {
    const res = await gw.http().post("/v1/lookup").set(bearer(key.key)).send({ emails, checks: ["email"], wait: 30 });
    expect(res.status).toBe(200);
    return Object.fromEntries(res.body.results.map((r: { input: string; checks: Array<Record<string, unknown>> }) => [r.input, r.checks[0]])) as Record<string, Record<string, unknown>>;
  };

  it("answers every address of one live lookup through the gateway", async () => {
    key = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    got = await lookup([...Object.keys(CASES), "not an address"]);
    expect(got["not an address"]).toMatchObject({ status: "invalid", registered: null, billed: false });
  }, 40_000);

  it.each(Object.entries(CASES))("%s", (address, expected) => {
    expect(pick(got[address])).toEqual(expected);
  });

  it("never asks a backup relay, not even when the primary says 421", () => {
    expect(smtp.sessionsOn(HOST.relay)).toHaveLength(0);
    expect(smtp.sessionsOn(HOST.dead)).toHaveLength(0);
  });

  it("is polite: at most two sessions per server at a time, several recipients per session, 452 handled with RSET", () => {
    // Fifteen addresses of one domain: one catch-all probe per session, not fifteen sessions.
    const busy = smtp.sessionsOn(HOST.busy);
    expect(smtp.maxConcurrent.get(HOST.busy)).toBeLessThanOrEqual(2);
    expect(busy.length).toBeLessThan(MANY.length);
    expect(Math.max(...busy.map((s) => s.commands.filter((c) => c.startsWith("RCPT")).length))).toBeGreaterThan(1);
    expect(busy.flatMap((s) => s.commands).filter((c) => c === "RSET").length).toBeGreaterThan(0);
    for (const host of LISTEN) expect(smtp.maxConcurrent.get(host) ?? 0).toBeLessThanOrEqual(2);
  });

  it("speaks STARTTLS where offered, and so reaches the server that requires it", () => {
    expect(smtp.sessionsOn(HOST.tls).length).toBeGreaterThan(0);
    expect(smtp.sessionsOn(HOST.tls).every((s) => s.tls)).toBe(true);
    expect(smtp.sessionsOn(HOST.m365).every((s) => s.tls)).toBe(true);
  });

  it("never sends a message and always introduces itself with the configured identity", () => {
    const all = smtp.commands;
    expect(all.filter((c) => /^(DATA|BDAT|VRFY|EXPN)\b/i.test(c))).toEqual([]);
    // (A session refused at the banner sees only our QUIT.)
    for (const s of smtp.sessions.filter((x) => x.commands.some((c) => c !== "QUIT"))) expect(s.commands[0]).toMatch(/^(EHLO|HELO) probe\.validation\.test$/);
    expect(all).toContain("MAIL FROM:<probe@validation.test>");
  });

  it("backs off a server that said 421: no new session, the next check is unknown at once (free)", async () => {
    const before = smtp.sessionsOn(HOST.banner421).length;
    expect(before).toBeGreaterThan(0);
    const again = await lookup(["carol@banner.example"]);
    expect(pick(again["carol@banner.example"])).toEqual(unknown);
    expect(smtp.sessionsOn(HOST.banner421)).toHaveLength(before);
  });

  it("bills exactly the conclusive answers: 0.003 each, nothing left reserved", async () => {
    const billed = Object.values(CASES).filter((c) => c.billed).length;
    const settled = await eventually(async () => {
      const r = await reconcileAccount(gw.store.pool, key.accountId);
      return r.reservedMicros === 0n ? r : undefined;
    }, 15_000, "settled");
    expect(settled).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 3_000n * BigInt(billed) });
  }, 20_000);
});

function pick(check: Record<string, unknown> | undefined) {
  return { status: check?.status, registered: check?.registered, attributes: check?.attributes, billed: check?.billed };
}
