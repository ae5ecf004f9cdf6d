import net from "node:net";

/**
 * A scriptable SMTP server on 127.0.0.1 for tests. It records every command line
 * of every session (so tests can assert that DATA never arrives) and answers
 * according to `script`, which tests change between cases:
 * - `greeting`: the 220 banner (multi-line by default), or null to never greet (hang);
 * - `ehlo`: "ok" (multi-line 250) or "refuse" (502: the client must fall back to HELO);
 * - `mailFrom`: the reply to MAIL FROM;
 * - `rcpt(address)`: the reply to RCPT TO, or null to never answer (hang);
 * - `replyDelayMs`: delay before every reply (slow server).
 */
export type SmtpScript = {
  greeting: string | null;
  ehlo: "ok" | "refuse";
  mailFrom: string;
  rcpt: (address: string) => string | null;
  replyDelayMs: number;
};

export type SmtpSession = { commands: string[]; closed: boolean };

export const DEFAULT_SCRIPT: SmtpScript = {
  greeting: "220-fake.test ESMTP ready\r\n220 no UCE",
  ehlo: "ok",
  mailFrom: "250 2.1.0 Sender OK",
  rcpt: () => "250 2.1.5 Recipient OK",
  replyDelayMs: 0,
};

export class FakeSmtpServer {
  script: SmtpScript = { ...DEFAULT_SCRIPT };
  readonly sessions: SmtpSession[] = [];
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  async start(host = "127.0.0.1"): Promise<number> {
    const server = net.createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, () => resolve());
    });
    this.server = server;
    return (server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  reset(script: Partial<SmtpScript> = {}): void {
    this.script = { ...DEFAULT_SCRIPT, ...script };
    this.sessions.length = 0;
  }

  /** Every command line received, across sessions. */
  get commands(): string[] {
    return this.sessions.flatMap((s) => s.commands);
  }

  /** Resolves once every session has been closed (by either side). */
  async idle(timeoutMs = 2_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.sessions.some((s) => !s.closed)) {
      if (Date.now() > until) throw new Error("SMTP sessions still open");
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private serve(socket: net.Socket): void {
    const session: SmtpSession = { commands: [], closed: false };
    const script = this.script;
    this.sessions.push(session);
    this.sockets.add(socket);
    socket.setEncoding("latin1");
    socket.on("error", () => undefined);
    socket.on("close", () => {
      session.closed = true;
      this.sockets.delete(socket);
    });
    const send = (reply: string | null, then?: () => void) => {
      if (reply === null) return; // hang: never answer
      setTimeout(() => {
        if (socket.destroyed) return;
        socket.write(`${reply}\r\n`);
        then?.();
      }, script.replyDelayMs);
    };
    send(script.greeting);
    let buffer = "";
    let inData = false;
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\r\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        session.commands.push(line);
        if (inData) {
          if (line === ".") {
            inData = false;
            send("250 2.0.0 queued");
          }
          continue;
        }
        const verb = line.split(/[ :]/)[0]?.toUpperCase();
        if (verb === "EHLO") send(script.ehlo === "ok" ? "250-fake.test hello\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n250 8BITMIME" : "502 5.5.1 EHLO not supported");
        else if (verb === "HELO") send("250 fake.test");
        else if (verb === "MAIL") send(script.mailFrom);
        else if (verb === "RCPT") send(script.rcpt(/<([^>]*)>/.exec(line)?.[1] ?? ""));
        else if (verb === "DATA") {
          inData = true;
          send("354 go ahead");
        } else if (verb === "RSET" || verb === "NOOP") send("250 2.0.0 OK");
        else if (verb === "QUIT") send("221 2.0.0 bye", () => socket.end());
        else send("500 5.5.2 unknown command");
      }
    });
  }
}
