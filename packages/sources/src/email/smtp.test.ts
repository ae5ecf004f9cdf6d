import net from "node:net";
import { classifyRcpt } from "./rcpt-rules";
import { probeMailbox, runSession, type ProbeOptions } from "./session";
import { SmtpConnection, SmtpError } from "./smtp";
import { FakeSmtpServer } from "./testing/fake-smtp";

const smtp = new FakeSmtpServer();
let port: number;

beforeAll(async () => {
  port = await smtp.start();
});
afterAll(() => smtp.stop());
beforeEach(() => smtp.reset());
afterEach(() => {
  expect(smtp.commands.filter((c) => /^(DATA|BDAT)\b/i.test(c))).toEqual([]);
});

const options = (extra: Partial<ProbeOptions> = {}): ProbeOptions => ({
  port,
  heloName: "probe.svc.test",
  mailFrom: "verify@svc.test",
  connectTimeoutMs: 500,
  stepTimeoutMs: 500,
  ...extra,
});

const TARGET = "alice@exists.test";
const RANDOM = "0123456789abcdef@exists.test";

describe("probeMailbox against a loopback SMTP server", () => {
  it("runs greeting, EHLO, MAIL FROM, RCPT target, RCPT random, QUIT and parses multi-line replies", async () => {
    smtp.reset({ rcpt: (a) => (a === TARGET ? "250 2.1.5 OK" : "550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 Please try again.") });
    const result = await probeMailbox("127.0.0.1", TARGET, RANDOM, options());
    expect(result).toEqual({
      kind: "rcpt",
      greeting: "EHLO",
      tls: false,
      target: { code: 250, lines: ["2.1.5 OK"], enhanced: "2.1.5" },
      random: {
        code: 550,
        lines: ["5.1.1 The email account that you tried to reach does not exist.", "5.1.1 Please try again."],
        enhanced: "5.1.1",
      },
      reason: null,
    });
    await smtp.idle();
    expect(smtp.commands).toEqual(["EHLO probe.svc.test", "MAIL FROM:<verify@svc.test>", `RCPT TO:<${TARGET}>`, `RCPT TO:<${RANDOM}>`, "QUIT"]);
  });

  it("does not ask about the random address when the target is rejected", async () => {
    smtp.reset({ rcpt: () => "550 5.1.1 no such user" });
    const result = await probeMailbox("127.0.0.1", TARGET, RANDOM, options());
    expect(result).toMatchObject({ kind: "rcpt", target: { code: 550, enhanced: "5.1.1" }, random: null });
    await smtp.idle();
    expect(smtp.commands.filter((c) => c.startsWith("RCPT"))).toEqual([`RCPT TO:<${TARGET}>`]);
  });

  it("falls back to HELO when EHLO is refused", async () => {
    smtp.reset({ ehlo: "refuse" });
    const result = await probeMailbox("127.0.0.1", TARGET, RANDOM, options());
    expect(result).toMatchObject({ kind: "rcpt", greeting: "HELO", target: { code: 250 } });
    expect(smtp.commands.slice(0, 3)).toEqual(["EHLO probe.svc.test", "HELO probe.svc.test", "MAIL FROM:<verify@svc.test>"]);
  });

  it("sends the null reverse path when mailFrom is empty", async () => {
    await probeMailbox("127.0.0.1", TARGET, RANDOM, options({ mailFrom: "" }));
    expect(smtp.commands).toContain("MAIL FROM:<>");
  });

  it("reports a refused greeting, a refused sender and a refused connection as no session", async () => {
    smtp.reset({ greeting: "554 5.7.1 go away" });
    await expect(probeMailbox("127.0.0.1", TARGET, RANDOM, options())).resolves.toMatchObject({ kind: "no_session", stage: "greeting", reply: { code: 554 } });
    expect(smtp.commands).toEqual(["QUIT"]);

    smtp.reset({ mailFrom: "553 5.7.1 sender rejected" });
    await expect(probeMailbox("127.0.0.1", TARGET, RANDOM, options())).resolves.toMatchObject({ kind: "no_session", stage: "mail_from", reply: { code: 553 } });
    expect(smtp.commands.some((c) => c.startsWith("RCPT"))).toBe(false);

    const closed = await closedTcpPort();
    await expect(probeMailbox("127.0.0.1", TARGET, RANDOM, options({ port: closed }))).resolves.toMatchObject({ kind: "no_session", stage: "connect" });
  });

  it("times out a server that never greets, and one that never answers RCPT", async () => {
    smtp.reset({ greeting: null });
    let started = Date.now();
    const silent = await probeMailbox("127.0.0.1", TARGET, RANDOM, options({ stepTimeoutMs: 200 }));
    expect(silent).toMatchObject({ kind: "no_session", stage: "greeting" });
    expect(silent.kind === "no_session" && silent.reason).toMatch(/no reply within 200 ms/);
    expect(Date.now() - started).toBeLessThan(1_500);

    smtp.reset({ rcpt: () => null });
    started = Date.now();
    const hung = await probeMailbox("127.0.0.1", TARGET, RANDOM, options({ stepTimeoutMs: 200 }));
    expect(hung).toMatchObject({ kind: "rcpt", target: null, random: null });
    expect(Date.now() - started).toBeLessThan(1_500);
    await smtp.idle();
  });

  it("stops at once when the signal fires and closes the connection", async () => {
    smtp.reset({ rcpt: () => null });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const err = await probeMailbox("127.0.0.1", TARGET, RANDOM, options({ stepTimeoutMs: 10_000, signal: controller.signal })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SmtpError);
    expect((err as SmtpError).kind).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(1_000);
    await smtp.idle();
    expect(smtp.sessions.every((s) => s.closed)).toBe(true);
  });
});

describe("SmtpConnection reply parsing", () => {
  /** A server that writes `chunks` one by one, 20 ms apart (so replies arrive in pieces). */
  async function withRawServer(chunks: string[], test: (conn: SmtpConnection) => Promise<void>): Promise<void> {
    const server = net.createServer((s) => {
      s.on("error", () => undefined);
      chunks.forEach((c, i) => setTimeout(() => s.destroyed || s.write(c), 20 * i));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const conn = await SmtpConnection.open("127.0.0.1", (server.address() as net.AddressInfo).port, { connectTimeoutMs: 500 });
    try {
      await test(conn);
    } finally {
      conn.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }

  it("joins continuation lines that arrive split across packets and bare-LF line ends", async () => {
    await withRawServer(["220-fir", "st\n220-second\r", "\n220 third\r\n250", " ok\r\n"], async (conn) => {
      await expect(conn.read(500)).resolves.toEqual({ code: 220, lines: ["first", "second", "third"], enhanced: null });
      await expect(conn.read(500)).resolves.toEqual({ code: 250, lines: ["ok"], enhanced: null });
    });
  });

  it("rejects malformed replies and continuation lines with another code", async () => {
    await withRawServer(["hello there\r\n"], async (conn) => {
      await expect(conn.read(500)).rejects.toMatchObject({ kind: "protocol" });
    });
    await withRawServer(["250-one\r\n251 two\r\n"], async (conn) => {
      await expect(conn.read(500)).rejects.toMatchObject({ kind: "protocol" });
    });
  });

  it("refuses to send a command containing a line break (no command injection)", async () => {
    await withRawServer(["220 hi\r\n"], async (conn) => {
      await conn.read(500);
      await expect(conn.command("RCPT TO:<a@b.test>\r\nDATA", 500)).rejects.toMatchObject({ kind: "protocol" });
    });
  });
});

describe("runSession: STARTTLS and several recipients per session", () => {
  const accepted = (r: { code: number }) => r.code >= 200 && r.code < 300;

  it("upgrades with STARTTLS when offered, says EHLO again, and accepts the server's self-signed certificate", async () => {
    smtp.reset({ starttls: "offer" });
    const result = await probeMailbox("127.0.0.1", TARGET, RANDOM, options({ serverName: "mx.exists.test" }));
    expect(result).toMatchObject({ kind: "rcpt", tls: true, target: { code: 250 } });
    await smtp.idle();
    expect(smtp.sessions[0]?.tls).toBe(true);
    expect(smtp.commands.slice(0, 4)).toEqual(["EHLO probe.svc.test", "STARTTLS", "EHLO probe.svc.test", "MAIL FROM:<verify@svc.test>"]);
  });

  it("a server that requires STARTTLS answers once the session is encrypted", async () => {
    smtp.reset({ starttls: "require", rcpt: () => "550 5.1.1 no such user" });
    await expect(probeMailbox("127.0.0.1", TARGET, RANDOM, options())).resolves.toMatchObject({ kind: "rcpt", tls: true, target: { code: 550 } });
    smtp.reset({ starttls: "require" });
    await expect(probeMailbox("127.0.0.1", TARGET, RANDOM, options({ startTls: false }))).resolves.toMatchObject({ kind: "no_session", stage: "mail_from", reply: { code: 530 } });
  });

  it("asks several recipients in one transaction and the catch-all probe once", async () => {
    smtp.reset({ rcpt: (a) => (a.startsWith("bob") ? "550 5.1.1 no such user" : "250 2.1.5 OK") });
    const targets = ["alice@exists.test", "bob@exists.test", "carol@exists.test"];
    const result = await runSession("127.0.0.1", { targets, random: RANDOM, askRandom: accepted }, options());
    expect(result).toMatchObject({ kind: "rcpt", targets: [{ code: 250 }, { code: 550 }, { code: 250 }], random: { code: 250 } });
    await smtp.idle();
    expect(smtp.sessions).toHaveLength(1);
    expect(smtp.commands).toEqual(["EHLO probe.svc.test", "MAIL FROM:<verify@svc.test>", ...targets.map((t) => `RCPT TO:<${t}>`), `RCPT TO:<${RANDOM}>`, "QUIT"]);
  });

  it("452 too many recipients: the rest go one per transaction (RSET, MAIL FROM, RCPT)", async () => {
    smtp.reset({ maxRcptsPerTransaction: 1 });
    const targets = ["alice@exists.test", "bob@exists.test", "carol@exists.test"];
    const result = await runSession("127.0.0.1", { targets, random: RANDOM, askRandom: accepted }, options());
    expect(result).toMatchObject({ kind: "rcpt", targets: [{ code: 250 }, { code: 250 }, { code: 250 }], random: { code: 250 } });
    await smtp.idle();
    expect(smtp.commands.filter((c) => c === "RSET")).toHaveLength(3);
    expect(smtp.commands.filter((c) => c.startsWith("MAIL FROM"))).toHaveLength(4);
  });

  it("a 421 mid-session ends it: the rest are unanswered", async () => {
    smtp.reset({ rcpt: (a) => (a.startsWith("bob") ? "421 4.7.0 Too many errors, closing connection" : "250 2.1.5 OK") });
    const targets = ["alice@exists.test", "bob@exists.test", "carol@exists.test"];
    const result = await runSession("127.0.0.1", { targets, random: RANDOM, askRandom: accepted }, options());
    expect(result).toMatchObject({ kind: "rcpt", targets: [{ code: 250 }, { code: 421 }, null], random: null, closing: { code: 421 } });
  });
});

describe("classifyRcpt", () => {
  const reply = (code: number, text: string) => {
    const m = /^([245])\.(\d+)\.(\d+)\s/.exec(text);
    return { code, lines: [text], enhanced: m ? `${m[1]}.${m[2]}.${m[3]}` : null };
  };

  it.each([
    [250, "2.1.5 OK", "accepted"],
    [251, "User not local; will forward", "accepted"],
    [252, "Cannot VRFY user, but will accept message", "accepted"],
    [550, "5.1.1 User unknown", "no_such_user"],
    [550, "5.1.10 Recipient address has null MX", "no_such_user"],
    [553, "5.1.3 Bad recipient address syntax", "no_such_user"],
    [550, "No such user here", "no_such_user"],
    [551, "User not local", "no_such_user"],
    [550, "Requested action not taken: mailbox unavailable", "no_such_user"],
    [550, "5.7.1 Client host blocked using zen.spamhaus.org", "refused"],
    [550, "Relaying denied", "refused"],
    [550, "Your IP is blacklisted", "refused"],
    [552, "5.2.2 Mailbox full", "refused"],
    [550, "5.2.1 The email account that you tried to reach is disabled", "refused"],
    [553, "5.1.8 Sender address rejected: Domain not found", "refused"],
    [554, "Transaction failed", "refused"],
    [450, "4.2.0 Greylisted, try again in 5 minutes", "temporary"],
    [451, "4.7.1 Please try again later", "temporary"],
    [452, "4.5.3 Too many recipients", "temporary"],
  ] as const)("%i %s -> %s", (code, text, expected) => {
    expect(classifyRcpt(reply(code, text))).toBe(expected);
  });
});

async function closedTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port: p } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return p;
}
