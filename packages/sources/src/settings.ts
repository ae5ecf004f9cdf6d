import { Type } from "@svc/config";

/**
 * The settings of the checks' routes: vendor URLs and keys, the e-mail probe, DNS.
 * The check-worker builds its routes from them (services/check-worker/src/sources.ts)
 * and the admin CLI's `doctor` reads the same ones, validated by this same schema, to
 * say which checks a fleet so configured answers live.
 */
export const sourceRoutesEnv = {
  /** Vendor routes for whatsapp, signal.registered and number.hlr (docs/vendor-contract.md), tried in order. */
  VENDOR_PRIMARY_URL: Type.Optional(Type.String({ pattern: "^https?://" })),
  VENDOR_PRIMARY_KEY: Type.String({ default: "" }),
  VENDOR_SECONDARY_URL: Type.Optional(Type.String({ pattern: "^https?://" })),
  VENDOR_SECONDARY_KEY: Type.String({ default: "" }),
  VENDOR_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 5_000 }),
  VENDOR_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
  VENDOR_RETRIES: Type.Integer({ minimum: 0, maximum: 5, default: 2 }),
  /**
   * carrier: ask the vendor routes' hlr service for the network serving each number now
   * (porting data) before answering from allocation data. Off by default: every carrier
   * check then costs a vendor HLR query.
   */
  CARRIER_NETWORK_LOOKUPS: Type.Boolean({ default: false }),
  /** E-mail probe: our public host name (EHLO) and return address (MAIL FROM). Unset = no e-mail route. */
  SMTP_HELO_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  SMTP_MAIL_FROM: Type.String({ default: "" }),
  SMTP_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 25 }),
  SMTP_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  SMTP_STEP_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 20_000 }),
  SMTP_DEADLINE_MS: Type.Integer({ minimum: 200, maximum: 300_000, default: 40_000 }),
  SMTP_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  /** Politeness (docs/check-quality.md): simultaneous sessions per mail server address in this process. */
  SMTP_MAX_SESSIONS_PER_MX: Type.Integer({ minimum: 1, maximum: 50, default: 2 }),
  /** Recipients of one domain asked in one session (plus one catch-all probe). */
  SMTP_MAX_RCPTS_PER_SESSION: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  /** No new session to a server for this long after it answered 421 (or 4xx before RCPT). */
  SMTP_MX_BACKOFF_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 120_000 }),
  /** Upgrade probe sessions with STARTTLS when offered (opportunistic, certificate not verified). */
  SMTP_STARTTLS: Type.Boolean({ default: true }),
  /** Resolvers for MX lookups, "ip" or "ip:port", comma-separated; empty = the system's. */
  DNS_SERVERS: Type.String({ default: "" }),
  DNS_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 5_000 }),
  /**
   * Development and tests only: let the probe connect to private and loopback mail
   * servers. Refused when NODE_ENV is production.
   */
  SMTP_ALLOW_PRIVATE_ADDRESSES: Type.Boolean({ default: false }),
};

/** The vendor routes as the check-worker tries them, primary first; a route without a URL is not configured. */
export function vendorRoutes(config: { VENDOR_PRIMARY_URL?: string | undefined; VENDOR_PRIMARY_KEY: string; VENDOR_SECONDARY_URL?: string | undefined; VENDOR_SECONDARY_KEY: string }) {
  return [
    { name: "vendor-primary", setting: "VENDOR_PRIMARY_URL", url: config.VENDOR_PRIMARY_URL, key: config.VENDOR_PRIMARY_KEY },
    { name: "vendor-secondary", setting: "VENDOR_SECONDARY_URL", url: config.VENDOR_SECONDARY_URL, key: config.VENDOR_SECONDARY_KEY },
  ] as const;
}
