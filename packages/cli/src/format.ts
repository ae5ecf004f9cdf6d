import type { Account, Estimate, Job, Limits, Lookup, Money, ResultRow, ServiceList, Usage, WebhookEndpoint } from "@svc/sdk";
import { fields, table } from "./output";

/** Human renderings of the API's objects. `--json` prints the objects themselves instead. */

/** Amounts stay the API's decimal strings: never parsed into floats for display. */
export const money = (m: Money | null | undefined): string => (m ? `${m.amount} ${m.currency}` : "-");

const yesNo = (b: boolean | null | undefined): string => (b === true ? "yes" : b === false ? "no" : "-");
const when = (iso: string | null | undefined): string | null => (iso ? iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC") : null);

function attributes(a: Record<string, unknown> | null | undefined): string {
  if (!a) return "";
  return Object.entries(a)
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" ");
}

/** The identifier a row stands for: the normalised number or address, else the (masked) input. */
export const identifierOf = (r: ResultRow): string => r.e164 ?? r.email ?? r.input;

export const ROW_HEADERS = ["ROW", "IDENTIFIER", "CHECK", "STATUS", "REGISTERED", "DETAILS"];

/** One line per check of each row: results of a lookup or a job page. */
export function rowLines(rows: ResultRow[]): string[][] {
  const lines: string[][] = [];
  for (const r of rows) {
    const rowStatus = r.kind === "number" ? r.number_status : r.email_status;
    if (r.checks.length === 0) lines.push([String(r.row_no), identifierOf(r), "-", rowStatus ?? "-", "-", ""]);
    for (const c of r.checks) {
      const status = c.status === "ok" || !rowStatus || rowStatus === "valid" || rowStatus === c.status ? c.status : `${c.status} (${rowStatus})`;
      const extra = [attributes(c.attributes), c.cached ? "cached" : "", c.billed ? "billed" : ""].filter(Boolean).join(" ");
      lines.push([String(r.row_no), identifierOf(r), c.service, status, yesNo(c.registered), extra]);
    }
  }
  return lines;
}

export function lookupText(l: Lookup): string {
  const head = fields([
    ["lookup", l.id],
    ["status", l.status + (l.livemode ? "" : " (test mode)")],
    ["summary", `${l.summary.total} rows: ${l.summary.registered} registered, ${l.summary.not_registered} not registered, ${l.summary.unknown} unknown`],
    ["poll", l.status === "pending" ? (l.next?.poll_url ?? null) : null],
  ]);
  return `${head}\n\n${table(ROW_HEADERS, rowLines(l.results), ["right"])}`;
}

function progressText(j: Job): string {
  const p = j.progress;
  const pct = p.checks_total > 0 ? ` (${Math.floor((100 * p.done) / p.checks_total)} %)` : "";
  return `${p.done}/${p.checks_total} checks done${pct}, ${p.total} rows; ${p.conclusive} conclusive, ${p.non_billable} not billable`;
}

export function jobText(j: Job): string {
  const finished = j.status === "completed" || j.status === "cancelled" || j.status === "failed";
  const text = fields([
    ["job", j.id],
    ["status", j.status + (j.livemode ? "" : " (test mode)")],
    ["checks", j.checks.join(", ")],
    ["progress", progressText(j)],
    ["charged", money(j.cost.charged)],
    ["reserved", money(j.cost.reserved)],
    ["max cost", j.max_cost ? money(j.max_cost) : null],
    ["failure", j.failure ? `${j.failure.code}: ${j.failure.message}` : null],
    ["created", when(j.created_at)],
    ["started", when(j.started_at)],
    ["finished", when(j.finished_at)],
    ["purged", when(j.purged_at)],
    ["webhook", j.webhook_endpoint_id],
  ]);
  const next = finished && !j.purged_at ? `\n\nResults: svc jobs results ${j.id}   Download: svc jobs download ${j.id} -o results.csv` : !finished ? `\n\nFollow it: svc jobs watch ${j.id}` : "";
  return text + next + (j.estimate ? `\n\nAs counted on creation:\n${estimateText(j.estimate)}` : "");
}

export function estimateText(e: Estimate): string {
  const counts = (c: Estimate["rows"]) => `${c.total} (${c.valid} valid, ${c.invalid} invalid, ${c.duplicate} duplicate)`;
  const head = fields([
    ["mode", e.livemode ? "live" : "test (never billed)"],
    ["rows", counts(e.rows)],
    ["numbers", counts(e.numbers)],
    ["e-mails", counts(e.emails)],
    ["checks", String(e.checks_total)],
    ["cached answers", `${e.cached_answers} (free)`],
    ["billable at most", `${e.billable_checks_max} checks`],
    ["max cost", money(e.max_cost)],
  ]);
  if (e.by_check.length === 0) return head;
  const rows = e.by_check.map((b) => [b.service, String(b.rows), String(b.cached), money(b.unit_price), money(b.max_cost)]);
  return `${head}\n\n${table(["CHECK", "ROWS", "CACHED", "UNIT PRICE", "MAX COST"], rows, ["left", "right", "right", "right", "right"])}`;
}

export function accountText(a: Account): string {
  return fields([
    ["account", `${a.id} (${a.name})`],
    ["mode", a.livemode ? "live" : "test"],
    ["balance", money(a.balance)],
    ["reserved", money(a.reserved)],
    ["available", money(a.available)],
    ["low balance at", a.low_balance_threshold ? money(a.low_balance_threshold) : "not set"],
    ["retention", `${a.retention_days} day${a.retention_days === 1 ? "" : "s"}`],
    [`today (${a.today.date})`, `${a.today.identifiers} identifiers, ${a.today.checks} checks, ${a.today.conclusive} conclusive, spent ${money(a.today.spend)}`],
  ]);
}

export function limitsText(l: Limits): string {
  const r = l.request_rate;
  const rate = [r.per_second !== undefined ? `${r.per_second}/s` : "", r.burst !== undefined ? `burst ${r.burst}` : "", r.per_minute !== undefined ? `${r.per_minute}/min` : "", r.per_day !== undefined ? `${r.per_day}/day` : ""].filter(Boolean).join(", ");
  const s = l.request_sizes;
  const cap = (c: { limit: Money; used: Money; resets_at: string } | null) => (c ? `${money(c.used)} of ${money(c.limit)} used, resets ${when(c.resets_at)}` : "none");
  return fields([
    ["request rate", `${rate} per ${r.scope === "ip" ? "IP address" : "key"}`],
    ["per lookup", `${s.lookup_identifiers} identifiers, ${s.lookup_identifier_checks} identifier×checks`],
    ["per job", `${s.job_identifiers} identifiers, ${s.job_identifier_checks} identifier×checks`],
    ["checks per request", String(s.checks_per_request)],
    ["body size", `${s.body_bytes} bytes (jobs and estimates ${s.job_body_bytes})`],
    ["daily identifiers", l.daily_identifiers_cap ? `${l.daily_identifiers_cap.used} of ${l.daily_identifiers_cap.limit} used, resets ${when(l.daily_identifiers_cap.resets_at)}` : "no cap"],
    ["account spend cap", cap(l.account_daily_spend_cap)],
    ["key spend cap", cap(l.key_daily_spend_cap)],
  ]);
}

export function usageText(u: Usage): string {
  const byDay = u.group_by === "day";
  const rows = u.data.map((d) => [(byDay ? d.day : d.service) ?? "-", String(d.checks), String(d.conclusive), String(d.cached), String(d.billed_units), money(d.cost)]);
  const t = u.totals;
  rows.push(["total", String(t.checks), String(t.conclusive), String(t.cached), String(t.billed_units), money(t.cost)]);
  const title = `Usage ${u.from} to ${u.to} (UTC), ${u.livemode ? "live" : "test"} mode, by ${u.group_by}`;
  return `${title}\n\n${table([byDay ? "DAY" : "CHECK", "CHECKS", "CONCLUSIVE", "CACHED", "BILLED", "COST"], rows, ["left", "right", "right", "right", "right", "right"])}`;
}

const BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];

/**
 * A bar chart of cost per day (for a terminal). When nothing in the range cost
 * anything (test mode is never billed), it charts checks per day instead and says so.
 */
export function usageChart(u: Usage, maxWidth = 40): string | null {
  if (u.group_by !== "day" || u.data.length === 0) return null;
  const costs = u.data.map((d) => Number(d.cost.amount));
  const byCost = costs.some((c) => c > 0);
  const values = byCost ? costs : u.data.map((d) => d.checks);
  const max = Math.max(...values);
  if (max <= 0) return null;
  const labels = u.data.map((d, i) => (byCost ? d.cost.amount : String(values[i])));
  const lw = Math.max(...labels.map((l) => l.length));
  const lines = u.data.map((d, i) => {
    const eighths = Math.round(((values[i] ?? 0) / max) * maxWidth * 8);
    const bar = "█".repeat(Math.floor(eighths / 8)) + (BLOCKS[eighths % 8] ?? "");
    return `${d.day ?? ""} │${bar.padEnd(maxWidth + 1)}${(labels[i] ?? "").padStart(lw)}`;
  });
  const title = byCost ? `Daily cost (${u.totals.cost.currency})` : "Daily checks (nothing in this range was billed)";
  return `${title}\n${lines.join("\n")}`;
}

export function servicesText(s: ServiceList): string {
  const rows = s.data.map((x) => [x.code, x.aliases.join(", ") || "-", x.input, yesNo(x.realtime), yesNo(x.bulk), money(x.prices.live), money(x.prices.test)]);
  const note = s.account_specific ? "Checks and prices of your account." : "Public catalog (set SVC_API_KEY for your account's checks and prices).";
  return `${note}\n\n${table(["CHECK", "ALIASES", "INPUT", "REAL-TIME", "BULK", "LIVE PRICE", "TEST PRICE"], rows, ["left", "left", "left", "left", "left", "right", "right"])}`;
}

export function webhooksTable(list: WebhookEndpoint[]): string {
  if (list.length === 0) return "No webhook endpoints in this mode (create one with `svc webhooks create --url https://… --events job.completed`).";
  const rows = list.map((w) => [w.id, w.url, w.events.join(","), w.status, w.livemode ? "live" : "test", when(w.created_at) ?? "-"]);
  return table(["ID", "URL", "EVENTS", "STATUS", "MODE", "CREATED"], rows);
}

export function webhookText(w: WebhookEndpoint): string {
  return fields([
    ["endpoint", w.id],
    ["url", w.url],
    ["events", w.events.join(", ")],
    ["status", w.status],
    ["mode", w.livemode ? "live" : "test"],
    ["created", when(w.created_at)],
    ["verified", when(w.verified_at)],
    ["secret", w.secret ?? null],
  ]);
}
