import { DnsError, DnsResolver, probeVendorRoute, vendorRoutes, type VendorProbe } from "@svc/sources";
import { carrierImportSummary, checkOffers, getAccount, liveCheckSettings, spamImportSummary } from "@svc/store";
import { CliError, parseFlags } from "../args";
import type { CliContext } from "../context";
import { assess, type CheckReport, type Findings } from "../doctor/assess";
import { CommandOutput, renderTable } from "../output";

/** Exit code when at least one check cannot answer live (2 is bad input, 1 a failure of the command itself). */
export const DOCTOR_UNAVAILABLE_EXIT = 3;

/**
 * doctor [--account ID] [--no-probe] [--format json|table]: for a fleet whose
 * check-workers read the same route settings as this process (VENDOR_*, SMTP_*,
 * DNS_*, validated by the same schema) and use this database, whether a live lookup
 * of each check answers, and what is missing for the others (docs/going-live.md).
 * Probes each vendor route with an empty batch (nothing looked up, nothing charged)
 * and resolves SMTP_HELO_NAME, each within its timeout. Exits 3 when a check is
 * `unavailable`.
 */
export async function doctor(args: string[], ctx: CliContext): Promise<CommandOutput> {
  const noProbe = args.includes("--no-probe");
  const flags = parseFlags(args.filter((a) => a !== "--no-probe"), ["account", "format"]);
  const format = flags.format ?? "json";
  if (format !== "json" && format !== "table") throw new CliError("--format must be json or table");
  const settings = ctx.routes;

  let account: Findings["account"] = null;
  if (flags.account !== undefined) {
    if (!(await getAccount(ctx.store.pool, flags.account))) throw new CliError(`no account with id "${flags.account}"`);
    account = { id: flags.account, offers: await checkOffers(ctx.store.pool, flags.account) };
  }
  const [spamImports, carrierImports, checkSettings, vendorProbes, heloDns] = await Promise.all([
    spamImportSummary(ctx.store.pool),
    carrierImportSummary(ctx.store.pool),
    liveCheckSettings(ctx.store.pool),
    noProbe ? null : probeVendors(settings),
    noProbe || !settings.SMTP_HELO_NAME ? null : resolveHelo(settings),
  ]);
  const checks = assess({ settings, now: ctx.now(), vendorProbes, heloDns, spamImports, carrierImports, checkSettings, account });
  const unavailable = checks.filter((c) => c.status === "unavailable").map((c) => c.check);
  const json = {
    object: "doctor",
    live_ready: unavailable.length === 0,
    unavailable,
    account_id: account?.id ?? null,
    checked_at: ctx.now().toISOString(),
    checks,
  };
  return new CommandOutput(json, format === "table" ? table(checks) : null, unavailable.length > 0 ? DOCTOR_UNAVAILABLE_EXIT : 0);
}

async function probeVendors(settings: CliContext["routes"]): Promise<Map<string, VendorProbe>> {
  const routes = vendorRoutes(settings).filter((r) => r.url);
  const probes = await Promise.all(routes.map((r) => probeVendorRoute(r.url as string, r.key, settings.VENDOR_TIMEOUT_MS)));
  return new Map(routes.map((r, i) => [r.name, probes[i] as VendorProbe]));
}

async function resolveHelo(settings: CliContext["routes"]): Promise<Findings["heloDns"]> {
  const servers = settings.DNS_SERVERS.split(",").map((s) => s.trim()).filter(Boolean);
  try {
    const resolver = new DnsResolver({ timeoutMs: settings.DNS_TIMEOUT_MS, tries: 1, ...(servers.length > 0 ? { servers } : {}) });
    return { addresses: await resolver.addresses(settings.SMTP_HELO_NAME as string) };
  } catch (err) {
    return { error: err instanceof DnsError ? err.kind : "resolver error" };
  }
}

function table(checks: CheckReport[]): string {
  const rows = checks.flatMap((c) => {
    const lines = c.missing.length > 0 ? c.missing : ["-"];
    return lines.map((why, i) => (i === 0 ? [c.check, c.status, c.live_price ? `$${c.live_price.amount}` : "none", why] : ["", "", "", why]));
  });
  return renderTable(["CHECK", "STATUS", "LIVE PRICE", "WHAT IS MISSING"], rows);
}
