import net from "node:net";
import { withSpan } from "@svc/runtime";

/** One SMTP reply: its code, its text lines (without the code) and the RFC 3463 enhanced status code, when the server sent one. */
export type SmtpReply = { code: number; lines: string[]; enhanced: string | null };

export type SmtpFailure = "connect" | "timeout" | "closed" | "protocol" | "aborted";

export class SmtpError extends Error {
  constructor(
    readonly kind: SmtpFailure,
    message: string,
    /** The socket error code (ECONNREFUSED, EHOSTUNREACH, ...) for `connect`/`closed`. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "SmtpError";
  }
}

const MAX_REPLY_BYTES = 64 * 1024;
const MAX_REPLY_LINES = 200;
const REPLY_LINE = /^([2-5]\d\d)([ -]|$)(.*)$/;
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})(?:\s|$)/;

/**
 * A plain-text SMTP client connection (RFC 5321) that only exchanges commands and
 * replies: no TLS, no message submission. Replies may span several lines
 * (`250-...` continuation lines, then `250 ...`). Every read has a timeout; the
 * AbortSignal destroys the socket at once.
 */
export class SmtpConnection {
  private buffer = "";
  private pending: string[] = [];
  private replies: SmtpReply[] = [];
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: SmtpError) => void } | null = null;
  private failure: SmtpError | null = null;

  private constructor(
    private readonly socket: net.Socket,
    private readonly signal: AbortSignal | undefined,
  ) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", (err: NodeJS.ErrnoException) => this.fail(new SmtpError("closed", `connection error: ${err.code ?? err.message}`, err.code)));
    socket.on("close", () => this.fail(new SmtpError("closed", "connection closed by the server")));
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Connects to an IP address (never resolved here: the caller chose the address). */
  static open(address: string, port: number, options: { connectTimeoutMs: number; signal?: AbortSignal }): Promise<SmtpConnection> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new SmtpError("aborted", "aborted before connecting"));
    if (net.isIP(address) === 0) return Promise.reject(new SmtpError("connect", `not an IP address: ${address}`));
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address, port, noDelay: true });
      const done = (err: SmtpError | null) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        socket.removeListener("error", onError);
        socket.removeListener("connect", onConnect);
        if (err) {
          socket.on("error", () => undefined);
          socket.destroy();
          reject(err);
        } else resolve(new SmtpConnection(socket, signal));
      };
      const onConnect = () => done(null);
      const onError = (err: NodeJS.ErrnoException) => done(new SmtpError("connect", `cannot connect to ${address}:${port}: ${err.code ?? err.message}`, err.code));
      const onAbort = () => done(new SmtpError("aborted", "aborted while connecting"));
      const timer = setTimeout(() => done(new SmtpError("timeout", `no connection to ${address}:${port} within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
      socket.once("connect", onConnect);
      socket.once("error", onError);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The next reply (the greeting, or the answer to the last command). */
  read(timeoutMs: number): Promise<SmtpReply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new SmtpError("timeout", `no reply within ${timeoutMs} ms`)), timeoutMs);
      this.waiter = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  /** Sends one command line and waits for its reply. */
  async command(line: string, timeoutMs: number): Promise<SmtpReply> {
    if (/[\r\n]/.test(line)) throw new SmtpError("protocol", "a command cannot contain a line break");
    if (this.failure) throw this.failure;
    this.socket.write(`${line}\r\n`, "latin1");
    return this.read(timeoutMs);
  }

  /** Sends QUIT and waits briefly for the 221; never throws. Closes the connection. */
  async quit(timeoutMs: number): Promise<void> {
    try {
      if (!this.failure) await this.command("QUIT", timeoutMs);
    } catch {
      // the server may close without answering; the probe result is already known
    } finally {
      this.close();
    }
  }

  close(): void {
    this.signal?.removeEventListener("abort", this.onAbort);
    this.fail(new SmtpError("closed", "connection closed by the client"));
  }

  private readonly onAbort = () => this.fail(new SmtpError("aborted", "aborted"));

  private onData(chunk: string): void {
    if (this.failure) return;
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      const m = REPLY_LINE.exec(line);
      const code = m?.[1];
      if (!m || code === undefined || (this.pending.length > 0 && !this.pending[0]?.startsWith(code))) {
        this.fail(new SmtpError("protocol", `malformed reply line: ${JSON.stringify(line.slice(0, 80))}`));
        return;
      }
      this.pending.push(line);
      if (this.pending.length > MAX_REPLY_LINES) {
        this.fail(new SmtpError("protocol", "reply has too many lines"));
        return;
      }
      if (m[2] === "-") continue;
      this.deliver(toReply(this.pending));
      this.pending = [];
    }
    if (this.buffer.length > MAX_REPLY_BYTES) this.fail(new SmtpError("protocol", "reply line too long"));
  }

  private deliver(reply: SmtpReply): void {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter.resolve(reply);
    else this.replies.push(reply);
  }

  private fail(err: SmtpError): void {
    if (this.failure) return;
    this.failure = err;
    this.socket.destroy();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(err);
  }
}

function toReply(lines: string[]): SmtpReply {
  const code = Number(lines[0]?.slice(0, 3));
  const texts = lines.map((l) => l.slice(4));
  const m = ENHANCED.exec(texts[0] ?? "");
  const enhanced = m && m[1] === String(code)[0] ? `${m[1]}.${m[2]}.${m[3]}` : null;
  return { code, lines: texts, enhanced };
}

export type ProbeOptions = {
  port: number;
  heloName: string;
  /** Reverse path for MAIL FROM; "" sends the null reverse path `<>`. */
  mailFrom: string;
  connectTimeoutMs: number;
  stepTimeoutMs: number;
  signal?: AbortSignal;
};

/**
 * What one mail server said.
 * - `no_session`: no recipient could be asked (connection failed, greeting or
 *   HELO/EHLO refused or timed out, MAIL FROM refused). Another MX host may do.
 * - `rcpt`: the server answered about the target (`target`, or null when it
 *   closed or timed out after RCPT) and, only when the target was accepted, about
 *   the random address at the same domain (`random`, null if not asked or no answer).
 */
export type ProbeResult =
  | { kind: "no_session"; stage: "connect" | "greeting" | "helo" | "mail_from"; reason: string; reply: SmtpReply | null }
  | { kind: "rcpt"; greeting: "EHLO" | "HELO"; target: SmtpReply | null; random: SmtpReply | null; reason: string | null };

/**
 * Asks one mail server whether it would accept mail for `target`, and for a random
 * address at the same domain (catch-all detection). Never sends DATA: the dialogue
 * is greeting, EHLO (HELO if EHLO is refused with 5xx), MAIL FROM, RCPT TO target,
 * RCPT TO random (only if the target was accepted), QUIT.
 * Throws SmtpError("aborted") when the signal fires; every other failure is in the result.
 */
export function probeMailbox(address: string, target: string, random: string, options: ProbeOptions): Promise<ProbeResult> {
  // One client span per dialogue. It says how far the dialogue went and what the server
  // answered (codes), never to whom: no host, address or mailbox in any attribute.
  return withSpan("smtp probe", { kind: "client", attributes: { "svc.smtp.port": options.port } }, async (span) => {
    const result = await probe(address, target, random, options);
    if (span) {
      if (result.kind === "no_session") span.setAttributes({ "svc.smtp.outcome": "no_session", "svc.smtp.stage": result.stage, "svc.smtp.reply_code": result.reply?.code ?? 0 });
      else span.setAttributes({ "svc.smtp.outcome": "rcpt", "svc.smtp.greeting": result.greeting, "svc.smtp.reply_code": result.target?.code ?? 0, "svc.smtp.random_reply_code": result.random?.code ?? 0 });
    }
    return result;
  });
}

async function probe(address: string, target: string, random: string, options: ProbeOptions): Promise<ProbeResult> {
  const step = options.stepTimeoutMs;
  let conn: SmtpConnection;
  try {
    conn = await SmtpConnection.open(address, options.port, { connectTimeoutMs: options.connectTimeoutMs, signal: options.signal });
  } catch (err) {
    return noSession("connect", err, null);
  }
  let stage: "greeting" | "helo" | "mail_from" | "rcpt" = "greeting";
  let greeting: "EHLO" | "HELO" = "EHLO";
  let targetReply: SmtpReply | null = null;
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

    stage = "mail_from";
    const from = await conn.command(`MAIL FROM:<${options.mailFrom}>`, step);
    if (from.code !== 250) return noSession("mail_from", null, from);

    stage = "rcpt";
    targetReply = await conn.command(`RCPT TO:<${target}>`, step);
    if (targetReply.code < 200 || targetReply.code >= 300) return { kind: "rcpt", greeting, target: targetReply, random: null, reason: null };
    const randomReply = await conn.command(`RCPT TO:<${random}>`, step);
    return { kind: "rcpt", greeting, target: targetReply, random: randomReply, reason: null };
  } catch (err) {
    if (err instanceof SmtpError && err.kind === "aborted") throw err;
    if (stage !== "rcpt") return noSession(stage, err, null);
    return { kind: "rcpt", greeting, target: targetReply, random: null, reason: (err as Error).message };
  } finally {
    if (options.signal?.aborted) conn.close();
    else await conn.quit(Math.min(step, 2_000));
  }
}

function noSession(stage: "connect" | "greeting" | "helo" | "mail_from", err: unknown, reply: SmtpReply | null): ProbeResult {
  if (err instanceof SmtpError && err.kind === "aborted") throw err;
  const reason = err ? (err as Error).message : `${stage} refused: ${reply?.code} ${reply?.lines[0] ?? ""}`.trim();
  return { kind: "no_session", stage, reason, reply };
}
