import { withSpan } from "@svc/process";
import { isTooManyRecipients } from "./rcpt-rules";
import { SmtpConnection, SmtpError, type SmtpReply } from "./smtp";

export type ProbeOptions = {
  port: number;
  heloName: string;
  /** Reverse path for MAIL FROM; "" sends the null reverse path `<>`. */
  mailFrom: string;
  connectTimeoutMs: number;
  stepTimeoutMs: number;
  /** Upgrade with STARTTLS when the server offers it (default true). */
  startTls?: boolean;
  /** The MX host name, sent as TLS SNI. */
  serverName?: string;
  signal?: AbortSignal;
};

export type SessionStage = "connect" | "greeting" | "helo" | "tls" | "mail_from";

/**
 * What one mail server said in one session.
 * - `no_session`: no recipient could be asked (connection failed, greeting, EHLO/HELO,
 *   STARTTLS or MAIL FROM refused or timed out). `reply` is the refusal, if any.
 * - `rcpt`: `targets[i]` answers `targets[i]` of the request (null when the server
 *   closed, timed out or said 421 before it was asked); `random` answers the
 *   catch-all probe, asked only when some target was accepted. `closing` is a 421
 *   the server sent mid-session (it is shutting the session down).
 */
export type SessionResult =
  | { kind: "no_session"; stage: SessionStage; reason: string; reply: SmtpReply | null }
  | { kind: "rcpt"; greeting: "EHLO" | "HELO"; tls: boolean; targets: Array<SmtpReply | null>; random: SmtpReply | null; closing: SmtpReply | null; reason: string | null };

export type SessionRequest = {
  targets: readonly string[];
  /** A random address at the same domain: asked after the targets when `askRandom` holds for one of their replies. */
  random: string;
  askRandom: (reply: SmtpReply) => boolean;
};

/**
 * One SMTP session that asks about several recipients of one domain. Never sends
 * DATA: greeting, EHLO (HELO if EHLO is refused with 5xx), STARTTLS and EHLO again
 * when offered, MAIL FROM, one RCPT TO per target, the catch-all RCPT TO, QUIT.
 * A 452 "too many recipients" (RFC 5321 4.5.3.1.10) makes the session go on one
 * recipient per transaction (RSET, MAIL FROM, RCPT) for the rest.
 * Throws SmtpError("aborted") when the signal fires; every other failure is in the result.
 */
export function runSession(address: string, request: SessionRequest, options: ProbeOptions): Promise<SessionResult> {
  // One client span per dialogue: how far it went and what the server answered (codes), never to whom.
  return withSpan("smtp probe", { kind: "client", attributes: { "svc.smtp.port": options.port, "svc.smtp.recipients": request.targets.length } }, async (span) => {
    const result = await session(address, request, options);
    if (span) {
      if (result.kind === "no_session") span.setAttributes({ "svc.smtp.outcome": "no_session", "svc.smtp.stage": result.stage, "svc.smtp.reply_code": result.reply?.code ?? 0 });
      else span.setAttributes({ "svc.smtp.outcome": "rcpt", "svc.smtp.greeting": result.greeting, "svc.smtp.tls": result.tls, "svc.smtp.random_reply_code": result.random?.code ?? 0 });
    }
    return result;
  });
}

async function session(address: string, request: SessionRequest, options: ProbeOptions): Promise<SessionResult> {
  const step = options.stepTimeoutMs;
  let conn: SmtpConnection;
  try {
    conn = await SmtpConnection.open(address, options.port, { connectTimeoutMs: options.connectTimeoutMs, signal: options.signal });
  } catch (err) {
    return noSession("connect", err, null);
  }
  let stage: SessionStage | "rcpt" = "greeting";
  let greeting: "EHLO" | "HELO" = "EHLO";
  const targets: Array<SmtpReply | null> = request.targets.map(() => null);
  let random: SmtpReply | null = null;
  let closing: SmtpReply | null = null;
  const result = (reason: string | null): SessionResult => ({ kind: "rcpt", greeting, tls: conn.tls, targets, random, closing, reason });
  try {
    const hello = await conn.read(step);
    if (hello.code !== 220) return noSession("greeting", null, hello);

    stage = "helo";
    let helo = await conn.command(`EHLO ${options.heloName}`, step);
    if (helo.code >= 500) {
      greeting = "HELO";
      helo = await conn.command(`HELO ${options.heloName}`, step);
    }
    if (helo.code !== 250) return noSession("helo", null, helo);

    if (greeting === "EHLO" && options.startTls !== false && helo.lines.slice(1).some((l) => /^STARTTLS\b/i.test(l))) {
      stage = "tls";
      const ready = await conn.command("STARTTLS", step);
      if (ready.code === 220) {
        await conn.startTls(options.serverName, step);
        stage = "helo";
        helo = await conn.command(`EHLO ${options.heloName}`, step); // RFC 3207: forget everything learned before TLS
        if (helo.code !== 250) return noSession("helo", null, helo);
      } else if (ready.code === 421) return noSession("tls", null, ready);
      // any other refusal: go on in plain text, as an MTA would
    }

    stage = "mail_from";
    const mailFrom = `MAIL FROM:<${options.mailFrom}>`;
    const from = await conn.command(mailFrom, step);
    if (from.code !== 250) return noSession("mail_from", null, from);

    stage = "rcpt";
    let inTransaction = 0;
    let onePerTransaction = false;
    const newTransaction = async () => {
      const reset = await conn.command("RSET", step);
      if (reset.code !== 250) throw new SmtpError("protocol", `RSET refused: ${reset.code}`);
      const again = await conn.command(mailFrom, step);
      if (again.code !== 250) throw new SmtpError("protocol", `MAIL FROM refused after RSET: ${again.code}`);
      inTransaction = 0;
    };
    const ask = async (recipient: string): Promise<SmtpReply> => {
      if (onePerTransaction && inTransaction > 0) await newTransaction();
      let reply = await conn.command(`RCPT TO:<${recipient}>`, step);
      inTransaction += 1;
      if (isTooManyRecipients(reply) && inTransaction > 1) {
        onePerTransaction = true;
        await newTransaction();
        reply = await conn.command(`RCPT TO:<${recipient}>`, step);
        inTransaction = 1;
      }
      if (reply.code === 421) closing = reply;
      return reply;
    };
    for (const [i, target] of request.targets.entries()) {
      targets[i] = await ask(target);
      if (closing) return result(null);
    }
    if (targets.some((r) => r !== null && request.askRandom(r))) random = await ask(request.random);
    return result(null);
  } catch (err) {
    if (err instanceof SmtpError && err.kind === "aborted") throw err;
    if (stage !== "rcpt") return noSession(stage, err, null);
    return result((err as Error).message);
  } finally {
    if (options.signal?.aborted || closing) conn.close();
    else await conn.quit(Math.min(step, 2_000));
  }
}

function noSession(stage: SessionStage, err: unknown, reply: SmtpReply | null): SessionResult {
  if (err instanceof SmtpError && err.kind === "aborted") throw err;
  const reason = err ? (err as Error).message : `${stage} refused: ${reply?.code} ${reply?.lines[0] ?? ""}`.trim();
  return { kind: "no_session", stage, reason, reply };
}

/**
 * One recipient (and the catch-all probe when it is accepted) in one session:
 * the single-address form of `runSession`, kept for callers and tests that ask
 * about one address.
 */
export type ProbeResult =
  | { kind: "no_session"; stage: SessionStage; reason: string; reply: SmtpReply | null }
  | { kind: "rcpt"; greeting: "EHLO" | "HELO"; tls: boolean; target: SmtpReply | null; random: SmtpReply | null; reason: string | null };

export async function probeMailbox(address: string, target: string, random: string, options: ProbeOptions): Promise<ProbeResult> {
  const result = await runSession(address, { targets: [target], random, askRandom: (r) => r.code >= 200 && r.code < 300 }, options);
  if (result.kind === "no_session") return result;
  return { kind: "rcpt", greeting: result.greeting, tls: result.tls, target: result.targets[0] ?? null, random: result.random, reason: result.reason };
}
