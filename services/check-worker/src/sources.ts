import type { RedisClient } from "@svc/queues";
import type { Logger } from "@svc/process";
import type { Store } from "@svc/store";
import { CheckRunner, NetworkCarrierSource, OfflineCarrierSource, ReportStoreSpamSource, SmtpEmailSource, VendorHttpSource } from "@svc/sources";
import type { CheckWorkerConfig } from "./config";

/** The routes of every check, from configuration; a check with no route is declared so the gateway can refuse it. */
export function buildRunner(config: CheckWorkerConfig, store: Store, redis: RedisClient, logger: Logger): CheckRunner {
  const runner = new CheckRunner(redis, config.REDIS_PREFIX, (route, err) => logger.warn({ route, err }, "route failed"));
  runner.add(new ReportStoreSpamSource(store.pool), { timeoutMs: 2_000, concurrency: 20, retries: 1 });
  const vendorLimits = { timeoutMs: config.VENDOR_TIMEOUT_MS, concurrency: config.VENDOR_CONCURRENCY, retries: config.VENDOR_RETRIES };
  const vendors = [
    { name: "vendor-primary", url: config.VENDOR_PRIMARY_URL, key: config.VENDOR_PRIMARY_KEY },
    { name: "vendor-secondary", url: config.VENDOR_SECONDARY_URL, key: config.VENDOR_SECONDARY_KEY },
  ];
  // carrier: the vendors' porting data first (opt-in, it costs an HLR query per number), the allocation data as the fallback.
  const allocation = new OfflineCarrierSource(store.pool);
  if (config.CARRIER_NETWORK_LOOKUPS) {
    for (const v of vendors) {
      if (v.url) runner.add(new NetworkCarrierSource(`${v.name}:carrier`, new VendorHttpSource(`${v.name}:carrier-hlr`, "number.hlr", v.url, v.key), allocation), vendorLimits);
    }
  }
  runner.add(allocation, { timeoutMs: 2_000, concurrency: 100, retries: 1 });
  for (const check of ["whatsapp", "signal.registered", "number.hlr"] as const) {
    for (const v of vendors) if (v.url) runner.add(new VendorHttpSource(`${v.name}:${check}`, check, v.url, v.key), vendorLimits);
    runner.declare(check);
  }
  if (config.SMTP_HELO_NAME) {
    const dnsServers = config.DNS_SERVERS.split(",").map((s) => s.trim()).filter(Boolean);
    const email = new SmtpEmailSource({
      heloName: config.SMTP_HELO_NAME,
      mailFrom: config.SMTP_MAIL_FROM,
      smtpPort: config.SMTP_PORT,
      connectTimeoutMs: config.SMTP_CONNECT_TIMEOUT_MS,
      stepTimeoutMs: config.SMTP_STEP_TIMEOUT_MS,
      deadlineMs: config.SMTP_DEADLINE_MS,
      dnsTimeoutMs: config.DNS_TIMEOUT_MS,
      allowPrivateAddresses: config.SMTP_ALLOW_PRIVATE_ADDRESSES,
      maxSessionsPerServer: config.SMTP_MAX_SESSIONS_PER_MX,
      maxRcptsPerSession: config.SMTP_MAX_RCPTS_PER_SESSION,
      backoffMs: config.SMTP_MX_BACKOFF_MS,
      startTls: config.SMTP_STARTTLS,
      ...(dnsServers.length > 0 ? { dnsServers } : {}),
    });
    // The route's timeout outlasts the probe's own deadline, which answers `unknown` itself.
    runner.add(email, { timeoutMs: config.SMTP_DEADLINE_MS + 5_000, concurrency: config.SMTP_CONCURRENCY, retries: 1 });
  }
  runner.declare("email");
  return runner;
}
