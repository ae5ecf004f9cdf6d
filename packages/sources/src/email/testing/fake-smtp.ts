import net from "node:net";
import tls from "node:tls";

/**
 * A scriptable SMTP server on loopback for tests. It records every command line
 * of every session (so tests can assert that DATA never arrives) and answers
 * according to `script`, which tests change between cases:
 * - `greeting`: the 220 banner (multi-line by default), a 421/554 refusal (sent,
 *   then the connection closes for 421), "<drop>" to close at once, or null to
 *   never greet (hang);
 * - `ehlo`: "ok" (multi-line 250) or "refuse" (502: the client must fall back to HELO);
 * - `starttls`: "none" (not offered), "offer" (offered, optional) or "require"
 *   (MAIL FROM gets 530 5.7.0 until the session is encrypted);
 * - `mailFrom`: the reply to MAIL FROM;
 * - `rcpt(address)`: the reply to RCPT TO, null to never answer (hang), or
 *   "<drop>" to close the connection instead of answering;
 * - `maxRcptsPerTransaction`: after this many RCPTs in one transaction, the next
 *   gets 452 4.5.3 Too many recipients (0: no limit);
 * - `replyDelayMs`: delay before every reply (slow server).
 *
 * One server can listen on several loopback addresses with the same port
 * (`start(["127.0.0.1", "127.0.0.2", "::1"])`): each address plays its own mail
 * host, with its own script (`host(address, script)`), and each session records
 * the address it came in on. `maxConcurrent` is the most simultaneous sessions
 * each address has seen (a session ends at its QUIT or when its connection closes).
 */
export type SmtpScript = {
  greeting: string | null;
  ehlo: "ok" | "refuse";
  starttls: "none" | "offer" | "require";
  mailFrom: string;
  rcpt: (address: string) => string | null;
  maxRcptsPerTransaction: number;
  replyDelayMs: number;
};

export type SmtpSession = { host: string; commands: string[]; closed: boolean; tls: boolean };

export const DEFAULT_SCRIPT: SmtpScript = {
  greeting: "220-fake.test ESMTP ready\r\n220 no UCE",
  ehlo: "ok",
  starttls: "none",
  mailFrom: "250 2.1.0 Sender OK",
  rcpt: () => "250 2.1.5 Recipient OK",
  maxRcptsPerTransaction: 0,
  replyDelayMs: 0,
};

/** A self-signed test certificate (CN=fake.test, P-256, valid until 2126). Test-only: it protects nothing. */
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUGrUWBMWmo5OV/XBlvg51BzKz9zMwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJZmFrZS50ZXN0MCAXDTI2MTEyMzE0MzQyOFoYDzIxMjYxMDMw
MTQzNDI4WjAUMRIwEAYDVQQDDAlmYWtlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASwPZ/CE/N3vTvDVAultNVZvKrmxuyrhueVG5Cz2fW639fVcRCCcOeM
ZLeOgqACzHEkoIuLstUfC3bwZRHbK1yZo1MwUTAdBgNVHQ4EFgQUK0Qor7IKtp10
R7merOMKgtjUtO0wHwYDVR0jBBgwFoAUK0Qor7IKtp10R7merOMKgtjUtO0wDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEArq/1+XU1deWFSQ27aImf
DNtqGQQpdx8kcqzPjfuoF8UCIFSSY2ROW9pGKGNT4paCySA5JzEG5BGav6L7ErR+
IQZJ
-----END CERTIFICATE-----`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg0HoBFVa5MTJX2WIq
AbX2UcQ4wGdo14/v9Qhd1CvIKWihRANCAASwPZ/CE/N3vTvDVAultNVZvKrmxuyr
hueVG5Cz2fW639fVcRCCcOeMZLeOgqACzHEkoIuLstUfC3bwZRHbK1yZ
-----END PRIVATE KEY-----`;

export class FakeSmtpServer {
  script: SmtpScript = { ...DEFAULT_SCRIPT };
  readonly sessions: SmtpSession[] = [];
  /** The most simultaneous sessions seen per listening address. */
  readonly maxConcurrent = new Map<string, number>();
  private readonly hostScripts = new Map<string, Partial<SmtpScript>>();
  private readonly open = new Map<string, number>();
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly secureContext = tls.createSecureContext({ cert: TEST_CERT, key: TEST_KEY });

  /** Listens on each address (same port, 0 = any free port for the first); returns the port. */
  async start(hosts: string | readonly string[] = "127.0.0.1", port = 0): Promise<number> {
    let p = port;
    for (const host of typeof hosts === "string" ? [hosts] : hosts) {
      const server = net.createServer((socket) => this.serve(socket));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(p, host, () => resolve());
      });
      this.servers.push(server);
      p = (server.address() as net.AddressInfo).port;
    }
    return p;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const servers = this.servers.splice(0);
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  reset(script: Partial<SmtpScript> = {}): void {
    this.script = { ...DEFAULT_SCRIPT, ...script };
    this.hostScripts.clear();
    this.sessions.length = 0;
    this.maxConcurrent.clear();
  }

  /** The script of one listening address (on top of `script`). */
  host(address: string, script: Partial<SmtpScript>): void {
    this.hostScripts.set(address, script);
  }

  /** Every command line received, across sessions. */
  get commands(): string[] {
    return this.sessions.flatMap((s) => s.commands);
  }

  /** The sessions that came in on one address. */
  sessionsOn(address: string): SmtpSession[] {
    return this.sessions.filter((s) => s.host === address);
  }

  /** Resolves once every session has been closed (by either side). */
  async idle(timeoutMs = 2_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.sessions.some((s) => !s.closed)) {
      if (Date.now() > until) throw new Error("SMTP sessions still open");
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private serve(raw: net.Socket): void {
    const host = (raw.localAddress ?? "").replace(/^::ffff:/, "");
    const session: SmtpSession = { host, commands: [], closed: false, tls: false };
    const script: SmtpScript = { ...this.script, ...this.hostScripts.get(host) };
    this.sessions.push(session);
    this.sockets.add(raw);
    const now = (this.open.get(host) ?? 0) + 1;
    this.open.set(host, now);
    this.maxConcurrent.set(host, Math.max(this.maxConcurrent.get(host) ?? 0, now));
    raw.on("error", () => undefined);
    // A session counts as open until its QUIT or its connection closing, whichever comes first.
    let counted = true;
    const ended = () => {
      if (!counted) return;
      counted = false;
      this.open.set(host, (this.open.get(host) ?? 1) - 1);
    };
    raw.on("close", () => {
      session.closed = true;
      this.sockets.delete(raw);
      ended();
    });

    let socket: net.Socket = raw;
    const send = (reply: string | null, then?: () => void) => {
      if (reply === null) return; // hang: never answer
      setTimeout(() => {
        if (socket.destroyed) return;
        if (reply === "<drop>") {
          socket.destroy();
          return;
        }
        socket.write(`${reply}\r\n`);
        then?.();
      }, script.replyDelayMs);
    };
    if (script.greeting === "<drop>") {
      raw.destroy();
      return;
    }
    send(script.greeting, script.greeting?.startsWith("421") ? () => socket.end() : undefined);
    let buffer = "";
    let inData = false;
    let rcpts = 0;
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("latin1");
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
        const offerTls = script.starttls !== "none" && !session.tls;
        if (verb === "EHLO") {
          if (script.ehlo !== "ok") send("502 5.5.1 EHLO not supported");
          else send(`250-fake.test hello\r\n250-PIPELINING\r\n${offerTls ? "250-STARTTLS\r\n" : ""}250-SIZE 10240000\r\n250 8BITMIME`);
        } else if (verb === "HELO") send("250 fake.test");
        else if (verb === "STARTTLS" && offerTls) {
          send("220 2.0.0 Ready to start TLS", () => {
            raw.removeListener("data", onData);
            const secure = new tls.TLSSocket(raw, { isServer: true, secureContext: this.secureContext });
            secure.on("error", () => raw.destroy());
            secure.on("secure", () => {
              session.tls = true;
            });
            secure.on("data", onData);
            socket = secure;
            buffer = "";
          });
          return;
        } else if (verb === "MAIL") {
          rcpts = 0;
          send(script.starttls === "require" && !session.tls ? "530 5.7.0 Must issue a STARTTLS command first" : script.mailFrom);
        } else if (verb === "RCPT") {
          rcpts += 1;
          if (script.maxRcptsPerTransaction > 0 && rcpts > script.maxRcptsPerTransaction) send("452 4.5.3 Too many recipients");
          else {
            const reply = script.rcpt(/<([^>]*)>/.exec(line)?.[1] ?? "");
            send(reply, reply?.startsWith("421") ? () => socket.end() : undefined);
          }
        } else if (verb === "DATA") {
          inData = true;
          send("354 go ahead");
        } else if (verb === "RSET") {
          rcpts = 0;
          send("250 2.0.0 OK");
        } else if (verb === "NOOP") send("250 2.0.0 OK");
        else if (verb === "QUIT") {
          ended();
          send("221 2.0.0 bye", () => socket.end());
        }
        else send("500 5.5.2 unknown command");
      }
    };
    raw.on("data", onData);
  }
}
