import { reconcileAccount } from "@svc/store";
import { FakeDnsServer } from "../../packages/sources/src/email/testing/fake-dns";
import { FakeSmtpServer } from "../../packages/sources/src/email/testing/fake-smtp";
import { accountWithKey, bearer } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually } from "../support/live";
import { routesKey } from "@svc/sources";

/**
 * The live e-mail check end to end: gateway → queue → check-worker → a local DNS
 * server and a local SMTP server (loopback only) → settlement.
 */
describe("live e-mail checks", () => {
  let gw: TestGateway;
  let dns: FakeDnsServer;
  let smtp: FakeSmtpServer;
  let worker: RunningService;
  let ledger: RunningService;

  beforeAll(async () => {
    gw = await startTestGateway();
    smtp = new FakeSmtpServer();
    const smtpPort = await smtp.start();
    smtp.script.rcpt = (address) =>
      address.startsWith("alice@") || address.startsWith("info+billing@") ? "250 2.1.5 OK" : address.endsWith("@grey.example") ? "451 4.7.1 Greylisted, try later" : "550 5.1.1 No such user";
    dns = new FakeDnsServer({
      "corp.example": { mx: [{ preference: 10, exchange: "mx.corp.example" }] },
      "mx.corp.example": { a: ["127.0.0.1"] },
      "grey.example": { mx: [{ preference: 10, exchange: "mx.corp.example" }] },
      "nomail.example": { a: [] },
      // A free provider and a known misspelling of it that receives mail (typo squatters do), both served locally;
      // gmaik.com is absent: NXDOMAIN, no mail host.
      "gmail.com": { mx: [{ preference: 10, exchange: "mx.corp.example" }] },
      "gmial.com": { mx: [{ preference: 10, exchange: "mx.corp.example" }] },
    });
    const dnsServer = await dns.start();
    [worker, ledger] = await Promise.all([
      startService("check-worker", gw.env, {
        SMTP_HELO_NAME: "probe.validation.test",
        SMTP_MAIL_FROM: "probe@validation.test",
        SMTP_PORT: String(smtpPort),
        DNS_SERVERS: dnsServer,
        DNS_TIMEOUT_MS: "1000",
        SMTP_ALLOW_PRIVATE_ADDRESSES: "true",
        SMTP_DEADLINE_MS: "5000",
      }),
      startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "500" }),
    ]);
    await eventually(async () => {
      const routes = await gw.deps.redis.get(routesKey(gw.env.redisPrefix, "email"));
      return routes && routes !== "[]" ? routes : undefined;
    }, 15_000, "email route advertised");
  });
  afterAll(async () => {
    await Promise.all([worker?.stop(), ledger?.stop()]);
    await smtp?.stop();
    await dns?.stop();
    await gw?.close();
  });

  it("answers whether each mailbox exists, bills the conclusive answers only, and never sends mail", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({
      emails: ["alice@corp.example", "bob@corp.example", "carol@grey.example", "dave@nomail.example", "not an address"],
      checks: ["email"],
      wait: 15,
    });
    expect(res.status).toBe(200);
    const byEmail = Object.fromEntries(res.body.results.map((r: { input: string; checks: Array<Record<string, unknown>> }) => [r.input, r.checks[0]]));
    expect(byEmail["alice@corp.example"]).toMatchObject({ status: "ok", registered: true, billed: true, attributes: { catch_all: false, mx_found: true, disposable: false, role_account: false, free_provider: false, did_you_mean: null } });
    expect(byEmail["bob@corp.example"]).toMatchObject({ status: "ok", registered: false, billed: true });
    expect(byEmail["carol@grey.example"]).toMatchObject({ status: "unknown", registered: null, billed: false });
    expect(byEmail["dave@nomail.example"]).toMatchObject({ status: "ok", registered: false, attributes: { mx_found: false } });
    expect(byEmail["not an address"]).toMatchObject({ status: "invalid", billed: false });
    for (const session of smtp.sessions) expect(session.commands.some((c) => /^DATA/i.test(c))).toBe(false);
    expect(smtp.sessions.flatMap((s) => s.commands)).toEqual(expect.arrayContaining([expect.stringMatching(/^EHLO probe\.validation\.test$/), expect.stringMatching(/^MAIL FROM:<probe@validation\.test>/)]));
    // 5 addresses reserved at 0.003; alice, bob and dave charged.
    const settled = await eventually(async () => {
      const r = await reconcileAccount(gw.store.pool, k.accountId);
      return r.reservedMicros === 0n ? r : undefined;
    });
    expect(settled).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 9_000n });
  });

  it("answers role account, free provider and typo suggestion (only for a known misspelling or a domain without mail), never changing billing", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const emails = ["info+billing@corp.example", "alice@gmail.com", "alice@gmial.com", "alice@gmaik.com", "erin@corp.example"];
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ emails, checks: ["email"], wait: 15 });
    expect(res.status).toBe(200);
    const byEmail = Object.fromEntries(res.body.results.map((r: { input: string; checks: Array<Record<string, unknown>> }) => [r.input, r.checks[0]]));
    const attrs = (a: Record<string, unknown>) => ({ catch_all: false, disposable: false, mx_found: true, role_account: false, free_provider: false, did_you_mean: null, ...a });
    expect(byEmail["info+billing@corp.example"]).toMatchObject({ status: "ok", registered: true, billed: true, attributes: attrs({ role_account: true }) });
    expect(byEmail["alice@gmail.com"]).toMatchObject({ status: "ok", registered: true, billed: true, attributes: attrs({ free_provider: true }) });
    // A known misspelling is corrected although it receives mail; the mailbox answer itself is unchanged.
    expect(byEmail["alice@gmial.com"]).toMatchObject({ status: "ok", registered: true, billed: true, attributes: attrs({ did_you_mean: "gmail.com", disposable: true }) }); // gmial.com is on the disposable list too
    expect(byEmail["alice@gmaik.com"]).toMatchObject({ status: "ok", registered: false, billed: true, attributes: attrs({ mx_found: false, did_you_mean: "gmail.com" }) });
    // A real domain that has mail gets no suggestion.
    expect(byEmail["erin@corp.example"]).toMatchObject({ status: "ok", registered: false, billed: true, attributes: attrs({}) });
    // Five conclusive answers at 0.003 each, whatever the new attributes say.
    const settled = await eventually(async () => {
      const r = await reconcileAccount(gw.store.pool, k.accountId);
      return r.reservedMicros === 0n ? r : undefined;
    });
    expect(settled).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 15_000n });
  });
});
