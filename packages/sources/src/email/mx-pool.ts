import { classifyRcpt, providerOf } from "./rcpt-rules";
import { runSession, type ProbeOptions, type SessionResult } from "./session";
import { SmtpError, type SmtpReply } from "./smtp";

/** One mail server to ask: the address we connect to and the MX host name it came from (TLS SNI, provider rules). */
export type MxServer = { address: string; host: string };

export type MxProbeRequest = {
  domain: string;
  local: string;
  /** The addresses of the domain's highest-priority MX hosts, in order; the first that holds a session answers. */
  servers: readonly MxServer[];
  /** The check's deadline or the caller's abort: the request leaves the queue (rejects with SmtpError "aborted"). */
  signal: AbortSignal;
};

/**
 * - `answered`: `server` replied to RCPT for the address (`target`, null when the
 *   session ended first) and, when some recipient of the session was accepted, to
 *   the session's random address at the domain (`random`).
 * - `no_session`: no server of the group held a session (refused, failed, or backing off).
 */
export type MxProbeAnswer = { kind: "answered"; server: MxServer; target: SmtpReply | null; random: SmtpReply | null } | { kind: "no_session"; backingOff: boolean };

export type MxPoolOptions = {
  /** Simultaneous sessions per mail server address, across every check of this process. */
  maxSessionsPerServer: number;
  /** Recipients asked in one session (the catch-all probe not counted). */
  maxRcptsPerSession: number;
  /** How long a server that said 421 (or 4xx before RCPT) gets no new session. */
  backoffMs: number;
  session: Omit<ProbeOptions, "signal" | "serverName">;
  /** A fresh random local part for the catch-all probe. */
  randomLocal: () => string;
  now?: () => number;
};

type Pending = {
  local: string;
  signal: AbortSignal;
  done: boolean;
  settle: (answer: MxProbeAnswer | SmtpError) => void;
  /** Set while the request is in a session: aborts the session once every request in it has gone. */
  onGone: (() => void) | null;
};

type Group = { key: string; domain: string; servers: readonly MxServer[]; pending: Pending[]; workers: number };

type Slot = { active: number; waiters: Array<() => void> };

/**
 * Politeness toward mail servers: the sessions of one worker process are shared
 * out per mail server address.
 * - At most `maxSessionsPerServer` simultaneous sessions per address; a check
 *   waits for a turn within its own deadline (then it is `unknown`).
 * - Checks of the same domain waiting for the same servers are coalesced: a
 *   session takes up to `maxRcptsPerSession` of them and asks one random address
 *   for the whole batch (catch-all).
 * - A server that answers 421 anywhere, or 4xx to the greeting, EHLO, STARTTLS or
 *   MAIL FROM, gets no new session for `backoffMs`; meanwhile its checks go to
 *   the group's other addresses or are `unknown` at once (no waiting: a back-off
 *   outlasts any check's deadline).
 */
export class MxPool {
  private readonly groups = new Map<string, Group>();
  private readonly slots = new Map<string, Slot>();
  private readonly backoffUntil = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: MxPoolOptions) {
    for (const [name, v] of Object.entries({ maxSessionsPerServer: options.maxSessionsPerServer, maxRcptsPerSession: options.maxRcptsPerSession })) {
      if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
    }
    if (!(options.backoffMs >= 0)) throw new Error("backoffMs must not be negative");
    this.now = options.now ?? Date.now;
  }

  probe(request: MxProbeRequest): Promise<MxProbeAnswer> {
    if (request.signal.aborted) return Promise.reject(new SmtpError("aborted", "aborted before the probe"));
    if (request.servers.length === 0) return Promise.resolve({ kind: "no_session", backingOff: false });
    const key = `${request.domain.toLowerCase()}|${request.servers.map((s) => s.address).join(",")}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { key, domain: request.domain, servers: request.servers, pending: [], workers: 0 };
      this.groups.set(key, group);
    }
    const g = group;
    return new Promise<MxProbeAnswer>((resolve, reject) => {
      const onAbort = () => {
        g.pending = g.pending.filter((p) => p !== pending);
        pending.settle(new SmtpError("aborted", "aborted while waiting for the mail server"));
        pending.onGone?.();
      };
      const pending: Pending = {
        local: request.local,
        signal: request.signal,
        done: false,
        onGone: null,
        settle: (answer) => {
          if (pending.done) return;
          pending.done = true;
          request.signal.removeEventListener("abort", onAbort);
          if (answer instanceof SmtpError) reject(answer);
          else resolve(answer);
        },
      };
      request.signal.addEventListener("abort", onAbort, { once: true });
      g.pending.push(pending);
      if (g.workers < this.options.maxSessionsPerServer) {
        g.workers += 1;
        void this.work(g);
      }
    });
  }

  /** Whether new sessions to this address are on hold. */
  backingOff(address: string): boolean {
    const until = this.backoffUntil.get(address);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.backoffUntil.delete(address);
    return false;
  }

  private backOff(address: string): void {
    if (this.options.backoffMs > 0) this.backoffUntil.set(address, this.now() + this.options.backoffMs);
  }

  /** Serves a group's queue until it is empty; at most maxSessionsPerServer of these run per group. */
  private async work(group: Group): Promise<void> {
    try {
      while (group.pending.length > 0) {
        let batch: Pending[] | null = null;
        let answered = false;
        let backingOff = false;
        for (const server of group.servers) {
          if (this.backingOff(server.address)) {
            backingOff = true;
            continue;
          }
          const release = await this.acquire(server.address);
          try {
            if (this.backingOff(server.address)) {
              backingOff = true;
              continue;
            }
            batch ??= this.take(group);
            if (batch.length === 0) return;
            const result = await this.session(server, group.domain, batch);
            if (result === null) {
              answered = true; // every request of the batch went away (deadline): nothing to answer
              break;
            }
            if (result.kind === "no_session") {
              if (result.reply && result.reply.code >= 400 && result.reply.code < 500) this.backOff(server.address);
              continue;
            }
            if (result.closing) this.backOff(server.address);
            batch.forEach((p, i) => p.settle({ kind: "answered", server, target: result.targets[i] ?? null, random: result.random }));
            answered = true;
            break;
          } finally {
            release();
          }
        }
        if (!answered) for (const p of batch ?? this.take(group)) p.settle({ kind: "no_session", backingOff });
      }
    } finally {
      group.workers -= 1;
      if (group.workers === 0 && group.pending.length === 0 && this.groups.get(group.key) === group) this.groups.delete(group.key);
    }
  }

  /** Up to maxRcptsPerSession requests still waiting, in arrival order. */
  private take(group: Group): Pending[] {
    const live = group.pending.filter((p) => !p.done);
    const batch = live.slice(0, this.options.maxRcptsPerSession);
    group.pending = live.slice(batch.length);
    return batch;
  }

  /** One session for a batch; null when every request of the batch left before it ended. */
  private async session(server: MxServer, domain: string, batch: Pending[]): Promise<SessionResult | null> {
    const controller = new AbortController();
    const gone = () => {
      if (batch.every((p) => p.done)) controller.abort();
    };
    for (const p of batch) p.onGone = gone;
    gone();
    const provider = providerOf(server.host);
    try {
      return await runSession(
        server.address,
        {
          targets: batch.map((p) => `${p.local}@${domain}`),
          random: `${this.options.randomLocal()}@${domain}`,
          askRandom: (reply) => classifyRcpt(reply, provider) === "accepted",
        },
        { ...this.options.session, serverName: server.host, signal: controller.signal },
      );
    } catch (err) {
      if (err instanceof SmtpError && err.kind === "aborted") return null;
      return { kind: "no_session", stage: "connect", reason: (err as Error).message, reply: null };
    } finally {
      for (const p of batch) p.onGone = null;
    }
  }

  private acquire(address: string): Promise<() => void> {
    let slot = this.slots.get(address);
    if (!slot) {
      slot = { active: 0, waiters: [] };
      this.slots.set(address, slot);
    }
    const s = slot;
    const release = () => {
      s.active -= 1;
      const next = s.waiters.shift();
      if (next) next();
      else if (s.active === 0) this.slots.delete(address);
    };
    if (s.active < this.options.maxSessionsPerServer) {
      s.active += 1;
      return Promise.resolve(release);
    }
    return new Promise((resolve) =>
      s.waiters.push(() => {
        s.active += 1;
        resolve(release);
      }),
    );
  }
}
