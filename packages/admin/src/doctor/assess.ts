import { CHECK_CODES, checkDef, money, type CheckCode, type Money } from "@svc/domain";
import { vendorRoutes, type VendorProbe } from "@svc/sources";
import { CARRIER_BLOCK_SOURCES, type ImportSummary, type LiveCheckSetting } from "@svc/store";
import { SPAM_SOURCES } from "../spam";
import type { SourceRoutesSettings } from "../context";

/**
 * Whether a live lookup of a check answers, for a fleet whose check-workers read
 * these settings and use this database:
 * - `ready`: it answers as designed;
 * - `limited`: it answers, but with less than it could (no spam reports imported:
 *   every number answers `no_reports`; no number blocks: fewer carrier names; one of
 *   two vendor routes failing its probe; …);
 * - `unavailable`: it cannot answer: no route is configured (the gateway answers
 *   `503 temporarily_unavailable`) or every configured route failed its probe.
 */
export type Readiness = "ready" | "limited" | "unavailable";

export type RouteReport = { name: string; setting: string; url: string; key_set: boolean; probe: VendorProbe | null };
export type CheckReport = {
  check: CheckCode;
  status: Readiness;
  /** The live list price per conclusive answer (the account's, with `--account`); null when the store has none. */
  live_price: Money | null;
  /** Who may use it: every account, or (a coming_soon check) only accounts it is switched on for. */
  offered_to: string;
  /** What stops or limits it, and what to do: one sentence each. */
  missing: string[];
  notes: string[];
  routes?: RouteReport[];
  imports?: Array<{ source: string; imports: number; last_import_at: string; last_rows: number; age_days: number }>;
};

/** What the store and the probes found, gathered by the command. */
export type Findings = {
  settings: SourceRoutesSettings;
  now: Date;
  /** null: probes were skipped (`--no-probe`). */
  vendorProbes: Map<string, VendorProbe> | null;
  /** The HELO name's DNS lookup: its addresses, or the failure; null when not probed. */
  heloDns: { addresses: string[] } | { error: string } | null;
  spamImports: ImportSummary[];
  carrierImports: ImportSummary[];
  checkSettings: LiveCheckSetting[];
  /** With `--account`: that account's price and switch per check. */
  account: { id: string; offers: Map<CheckCode, { livePriceMicros: bigint; enabledOverride: boolean | null }> } | null;
};

/** Spam reports older than this (the newest import of any source) make number.spam `limited`: government and community reports count fully for 90 days. */
export const SPAM_IMPORT_STALE_DAYS = 31;

const VENDOR_CHECKS = new Set<CheckCode>(["whatsapp", "signal.registered", "number.hlr"]);
const DAY_MS = 86_400_000;

/** A URL as it may be shown: without a user name or password. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(not a URL)";
  }
}

const PROBE_SAYS: Record<VendorProbe["outcome"], string> = {
  reachable: "answered the probe",
  key_refused: "refused the key (401/403): check its _KEY setting",
  vendor_error: "answered 429/5xx: down or overloaded right now",
  not_a_vendor: "answered like no vendor of docs/vendor-contract.md (wrong URL or path?)",
  unreachable: "could not be reached (connection refused, DNS or network)",
  timeout: "did not answer within VENDOR_TIMEOUT_MS",
};

export function assess(f: Findings): CheckReport[] {
  const settingsByCheck = new Map(f.checkSettings.map((s) => [s.check_code, s]));
  return CHECK_CODES.map((check) => {
    const def = checkDef(check);
    const stored = settingsByCheck.get(check);
    const offer = f.account?.offers.get(check);
    const priceMicros = f.account ? (offer?.livePriceMicros ?? null) : (stored?.live_price_micros ?? null);
    const report: CheckReport = { check, status: "ready", live_price: priceMicros === null ? null : money(priceMicros), offered_to: "every account", missing: [], notes: [] };
    const limit = (why: string) => {
      report.missing.push(why);
      if (report.status === "ready") report.status = "limited";
    };
    const stop = (why: string) => {
      report.missing.push(why);
      report.status = "unavailable";
    };

    // The gateway prices a check without a price row at 0: it answers, for free.
    if (priceMicros === null) report.notes.push(`no live price in the store: live answers are free until \`npm run admin -- price set --check ${check} --amount AMOUNT\``);
    else if (priceMicros === 0n) report.notes.push("the live price is 0: live answers are free");
    if (def.availability === "coming_soon") {
      const n = stored?.accounts_enabled ?? 0;
      report.offered_to = `only accounts it is switched on for (coming_soon; ${n} account${n === 1 ? "" : "s"})`;
      report.notes.push(`coming_soon: hidden from GET /v1/services and refused unless switched on per account: \`npm run admin -- check enable --account ID --check ${check}\``);
    } else if ((stored?.accounts_disabled ?? 0) > 0) {
      report.offered_to = `every account but ${stored?.accounts_disabled} switched off`;
    }
    if (f.account) {
      const enabled = offer?.enabledOverride ?? (def.availability === "active");
      report.offered_to = enabled ? `account ${f.account.id}` : `not account ${f.account.id} (switched off)`;
      if (!enabled) stop(`switched off for account ${f.account.id}: \`npm run admin -- check enable --account ${f.account.id} --check ${check}\``);
    }
    if (!def.realtime) report.notes.push("bulk jobs only (POST /v1/jobs), not POST /v1/lookup");

    if (VENDOR_CHECKS.has(check)) assessVendorCheck(f, report, limit, stop);
    else if (check === "email") assessEmail(f, report, limit, stop);
    else if (check === "number.spam") assessSpam(f, report, limit);
    else if (check === "carrier") assessCarrier(f, report, limit);
    return report;
  });
}

function assessVendorCheck(f: Findings, report: CheckReport, limit: (w: string) => void, stop: (w: string) => void): void {
  const configured = vendorRoutes(f.settings).filter((r) => r.url);
  if (configured.length === 0) {
    stop(`no vendor route: set VENDOR_PRIMARY_URL and VENDOR_PRIMARY_KEY on the check-workers (docs/vendor-contract.md); until then live ${report.check} answers 503 temporarily_unavailable (a fleet started with \`npm run up\` routes to its local vendor simulator instead: ask about that one with VENDOR_PRIMARY_URL=http://127.0.0.1:9090 VENDOR_PRIMARY_KEY=sim-key)`);
    return;
  }
  report.routes = configured.map((r) => ({ name: r.name, setting: r.setting, url: safeUrl(r.url as string), key_set: r.key !== "", probe: f.vendorProbes?.get(r.name) ?? null }));
  for (const r of report.routes) if (!r.key_set) report.notes.push(`${r.setting.replace(/_URL$/, "_KEY")} is empty: the route sends no key`);
  if (!f.vendorProbes) {
    report.notes.push("routes not probed (--no-probe)");
    return;
  }
  const failing = report.routes.filter((r) => r.probe?.outcome !== "reachable");
  for (const r of failing) report.notes.push(`${r.name} (${r.url}) ${PROBE_SAYS[r.probe?.outcome ?? "unreachable"]}`);
  if (failing.length === report.routes.length) {
    stop(`every vendor route failed the probe: live ${report.check} answers unknown (free) after retries, and 503 temporarily_unavailable once every route's circuit breaker is open`);
  } else if (failing.length > 0) {
    limit(`${failing.map((r) => r.name).join(", ")} failed the probe: no failover while it does`);
  }
}

function assessEmail(f: Findings, report: CheckReport, limit: (w: string) => void, stop: (w: string) => void): void {
  const s = f.settings;
  if (!s.SMTP_HELO_NAME) {
    stop("SMTP_HELO_NAME is not set on the check-workers: there is no e-mail route, so live email answers 503 temporarily_unavailable; set it to a public host name of yours that resolves to the workers' outgoing address, with outbound port 25 open");
    return;
  }
  report.notes.push(`EHLO ${s.SMTP_HELO_NAME}, MAIL FROM:<${s.SMTP_MAIL_FROM}>, port ${s.SMTP_PORT}, DNS ${s.DNS_SERVERS || "the system's resolvers"}`);
  if (s.SMTP_ALLOW_PRIVATE_ADDRESSES) report.notes.push("SMTP_ALLOW_PRIVATE_ADDRESSES is on: development and tests only (refused in production)");
  if (f.heloDns === null) report.notes.push("DNS not probed (--no-probe)");
  else if ("error" in f.heloDns) limit(`SMTP_HELO_NAME ${s.SMTP_HELO_NAME} does not resolve through the configured resolvers (${f.heloDns.error}): many mail servers refuse such a name, and MX lookups may fail the same way`);
  else if (f.heloDns.addresses.length === 0) limit(`SMTP_HELO_NAME ${s.SMTP_HELO_NAME} has no address record: many mail servers refuse such a name`);
  else report.notes.push(`${s.SMTP_HELO_NAME} resolves to ${f.heloDns.addresses.join(", ")} (it should be the workers' outgoing address, with reverse DNS back to the name)`);
}

function withAges(f: Findings, rows: ImportSummary[]) {
  return rows.map((r) => ({
    source: r.source,
    imports: r.imports,
    last_import_at: r.last_import_at.toISOString(),
    last_rows: r.last_rows,
    age_days: Math.floor((f.now.getTime() - r.last_import_at.getTime()) / DAY_MS),
  }));
}

function assessSpam(f: Findings, report: CheckReport, limit: (w: string) => void): void {
  report.imports = withAges(f, f.spamImports);
  if (report.imports.length === 0) {
    limit("no spam reports imported: every live number.spam answers risk_level no_reports (billed); import them with `npm run admin -- spam import` (docs/spam-importers.md)");
    return;
  }
  const newest = Math.min(...report.imports.map((i) => i.age_days));
  if (newest > SPAM_IMPORT_STALE_DAYS) {
    limit(`the newest spam-report import is ${newest} days old (more than ${SPAM_IMPORT_STALE_DAYS}): recent spam goes unseen; import fresh files (docs/spam-importers.md)`);
  }
  const missing = Object.values(SPAM_SOURCES).map((spec) => spec.source).filter((s) => !report.imports?.some((i) => i.source === s));
  if (missing.length > 0) report.notes.push(`never imported: ${missing.join(", ")}`);
}

function assessCarrier(f: Findings, report: CheckReport, limit: (w: string) => void): void {
  report.imports = withAges(f, f.carrierImports);
  if (report.imports.length === 0) {
    limit("no number-block allocations imported: carrier names come from libphonenumber's prefix data only (most US and CA numbers get none); import them with `npm run admin -- carrier import` (docs/carrier-importers.md)");
  } else {
    const missing = CARRIER_BLOCK_SOURCES.filter((s) => !report.imports?.some((i) => i.source === s));
    if (missing.length > 0) report.notes.push(`never imported: ${missing.join(", ")}`);
  }
  if (f.settings.CARRIER_NETWORK_LOOKUPS) {
    if (vendorRoutes(f.settings).some((r) => r.url)) report.notes.push("CARRIER_NETWORK_LOOKUPS is on: each carrier check first asks the vendors' hlr service (a vendor query per number)");
    else report.notes.push("CARRIER_NETWORK_LOOKUPS is on but no vendor route is set: answers come from allocation data only");
  }
}
