import net from "node:net";
import tls from "node:tls";

/** One SMTP reply: its code, its text lines (without the code) and the RFC 3463 enhanced status code, when the server sent one. */
export type SmtpReply = { code: number; lines: string[]; enhanced: string | null };

export type SmtpFailure = "connect" | "timeout" | "closed" | "protocol" | "tls" | "aborted";

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
 * An SMTP client connection (RFC 5321) that only exchanges commands and replies
 * (no message submission), optionally upgraded with STARTTLS (RFC 3207). Replies may span several lines
 * (`250-...` continuation lines, then `250 ...`). Every read has a timeout; the
 * AbortSignal destroys the socket at once.
 */
export class SmtpConnection {
  private buffer = "";
  private pending: string[] = [];
  private replies: SmtpReply[] = [];
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: SmtpError) => void } | null = null;
  private failure: SmtpError | null = null;

  private socket: net.Socket;
  private encrypted = false;

  private constructor(
    socket: net.Socket,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.socket = socket;
    this.attach(socket);
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Whether STARTTLS succeeded on this connection. */
  get tls(): boolean {
    return this.encrypted;
  }

  private readonly onSocketData = (chunk: string) => this.onData(chunk);
  private readonly onSocketError = (err: NodeJS.ErrnoException) => this.fail(new SmtpError("closed", `connection error: ${err.code ?? err.message}`, err.code));
  private readonly onSocketClose = () => this.fail(new SmtpError("closed", "connection closed by the server"));

  private attach(socket: net.Socket): void {
    socket.setEncoding("latin1");
    socket.on("data", this.onSocketData);
    socket.on("error", this.onSocketError);
    socket.on("close", this.onSocketClose);
  }

  private detach(socket: net.Socket): void {
    socket.removeListener("data", this.onSocketData);
    socket.removeListener("error", this.onSocketError);
    socket.removeListener("close", this.onSocketClose);
  }

  /**
   * Upgrades the connection after the server's 220 to STARTTLS. Opportunistic TLS
   * (RFC 7435): the certificate is not verified (see docs/check-quality.md), but
   * the host name goes out as SNI so servers with several certificates pick theirs.
   * A failed handshake fails the connection (kind `tls`).
   */
  async startTls(serverName: string | undefined, timeoutMs: number): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.buffer !== "" || this.replies.length > 0 || this.pending.length > 0) throw new SmtpError("protocol", "data after the STARTTLS reply");
    const raw = this.socket;
    this.detach(raw);
    const secure = tls.connect({
      socket: raw,
      servername: serverName && net.isIP(serverName) === 0 ? serverName : undefined,
      rejectUnauthorized: false,
      minVersion: "TLSv1",
    });
    this.socket = secure;
    await new Promise<void>((resolve, reject) => {
      const done = (err: SmtpError | null) => {
        clearTimeout(timer);
        secure.removeListener("secureConnect", onSecure);
        secure.removeListener("error", onError);
        secure.removeListener("close", onClose);
        this.signal?.removeEventListener("abort", onAbort);
        if (err) {
          secure.on("error", () => undefined);
          this.fail(err);
          reject(err);
        } else resolve();
      };
      const onSecure = () => done(null);
      const onError = (err: NodeJS.ErrnoException) => done(new SmtpError("tls", `TLS handshake failed: ${err.code ?? err.message}`, err.code));
      const onClose = () => done(new SmtpError("tls", "connection closed during the TLS handshake"));
      const onAbort = () => done(new SmtpError("aborted", "aborted during the TLS handshake"));
      const timer = setTimeout(() => done(new SmtpError("timeout", `no TLS handshake within ${timeoutMs} ms`)), timeoutMs);
      secure.once("secureConnect", onSecure);
      secure.once("error", onError);
      secure.once("close", onClose);
      this.signal?.addEventListener("abort", onAbort, { once: true });
    });
    this.attach(secure);
    this.encrypted = true;
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

/** A reply from its raw lines ("550-5.1.1 ...", "550 5.1.1 ..."), as the connection parses them. */
export function toReply(lines: string[]): SmtpReply {
  const code = Number(lines[0]?.slice(0, 3));
  const texts = lines.map((l) => l.slice(4));
  const m = ENHANCED.exec(texts[0] ?? "");
  const enhanced = m && m[1] === String(code)[0] ? `${m[1]}.${m[2]}.${m[3]}` : null;
  return { code, lines: texts, enhanced };
}
