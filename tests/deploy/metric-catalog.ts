import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { metrics, registry, startProcessMetrics } from "@svc/metrics";

/**
 * What the fleet's processes export, from the code itself: every metric of the
 * metrics catalog, `svc_build_info` and prom-client's default process metrics,
 * with their types and label names. Alerts, KEDA triggers and the dashboard are
 * checked against it, so a renamed metric or label fails a test instead of
 * silently alerting on nothing.
 */
export type MetricInfo = { name: string; type: string; labels: string[] };

export const ROOT = path.resolve(__dirname, "..", "..");

let cached: Map<string, MetricInfo> | null = null;

export function metricCatalog(): Map<string, MetricInfo> {
  if (cached) return cached;
  startProcessMetrics("k8s-test", "0.0.0");
  for (const make of Object.values(metrics)) make();
  const out = new Map<string, MetricInfo>();
  for (const m of registry.getMetricsAsArray()) {
    const { name, labelNames } = m as unknown as { name: string; labelNames: string[] };
    const type = (m as unknown as { type?: string }).type ?? m.constructor.name.toLowerCase();
    out.set(name, { name, type, labels: [...labelNames] });
  }
  cached = out;
  return out;
}

/** Series names a query may use: histograms expose _bucket (with `le`), _sum and _count, not their own name. */
export function seriesCatalog(): Map<string, MetricInfo> {
  const out = new Map<string, MetricInfo>();
  for (const m of metricCatalog().values()) {
    if (m.type === "histogram") {
      out.set(`${m.name}_bucket`, { ...m, labels: [...m.labels, "le"] });
      out.set(`${m.name}_sum`, m);
      out.set(`${m.name}_count`, m);
    } else {
      out.set(m.name, m);
    }
  }
  return out;
}

/** Labels Prometheus adds to every scraped series (PodMonitor target labels), beside the metric's own. */
export const TARGET_LABELS = ["namespace", "pod", "container", "instance", "job", "endpoint"];

/** Every `name: "svc_…"` a metric is registered under in the source (not tests): catches metrics made outside the catalog. */
export function registeredInSource(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      if (entry === "node_modules" || entry === "dist") continue;
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.ts$/.test(entry) && !/\.test\.ts$/.test(entry)) {
        for (const m of readFileSync(full, "utf8").matchAll(/\bname:\s*"(svc_[a-z0-9_]+)"/g)) names.add(m[1] as string);
      }
    }
  };
  for (const top of ["packages", "services"]) {
    for (const pkg of readdirSync(path.join(ROOT, top))) {
      const src = path.join(ROOT, top, pkg, "src");
      try {
        if (statSync(src).isDirectory()) walk(src);
      } catch {
        // a package without src/
      }
    }
  }
  return [...names].sort();
}

export type Selector = { metric: string; matchers: { label: string; op: string; value: string }[] };
export type ParsedQuery = { selectors: Selector[]; grouping: string[] };

const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"]);
const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
/** Aggregations may put their `by (…)` between the name and the parenthesis: `sum by (queue) (…)`. */
const AGGREGATIONS = new Set(["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"]);

/**
 * A small PromQL reader, enough for our rules, triggers and panels: the metric
 * selectors (name and label matchers) and the labels of by/without/on/ignoring
 * clauses. Grafana's `$__…` interval variables stand for a duration; `$var`
 * inside a matcher's string is kept as text.
 */
export function parsePromQL(input: string): ParsedQuery {
  const expr = input.replace(/\$__\w+/g, "5m");
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < expr.length && /\s/.test(expr[i] as string)) i += 1;
  };
  const readBraces = (): Selector["matchers"] => {
    const end = expr.indexOf("}", i);
    if (end < 0) throw new Error(`unclosed { in ${input}`);
    const body = expr.slice(i + 1, end);
    i = end + 1;
    const matchers: Selector["matchers"] = [];
    for (const m of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      matchers.push({ label: m[1] as string, op: m[2] as string, value: m[3] as string });
    }
    const leftover = body.replace(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g, "").replace(/[\s,]/g, "");
    if (leftover) throw new Error(`unreadable matchers {${body}} in ${input}`);
    return matchers;
  };
  while (i < expr.length) {
    const c = expr[i] as string;
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      const close = expr.indexOf(c, i + 1);
      i = close < 0 ? expr.length : close + 1;
      continue;
    }
    if (c === "[") {
      i = expr.indexOf("]", i) + 1;
      continue;
    }
    if (c === "{") {
      // A selector without a name ({__name__=…}): not used here, so refuse it.
      throw new Error(`selector without a metric name in ${input}`);
    }
    const num = /^(\d+(\.\d+)?([eE][+-]?\d+)?|\.\d+)/.exec(expr.slice(i));
    if (num) {
      i += num[0].length;
      continue;
    }
    const ident = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i));
    if (ident) {
      const word = ident[0];
      i += word.length;
      skipSpace();
      if (GROUPING.has(word)) {
        if (expr[i] === "(") {
          const close = expr.indexOf(")", i);
          grouping.push(...expr.slice(i + 1, close).split(",").map((s) => s.trim()).filter(Boolean));
          i = close + 1;
        }
        continue;
      }
      if (KEYWORDS.has(word.toLowerCase()) || AGGREGATIONS.has(word)) continue;
      if (expr[i] === "(") continue; // a function or an aggregation
      const matchers = expr[i] === "{" ? readBraces() : [];
      selectors.push({ metric: word, matchers });
      continue;
    }
    i += 1; // operators, parentheses, commas
  }
  return { selectors, grouping };
}

/**
 * Problems of one query against the catalog: unknown metrics, matchers on labels
 * the metric does not have, groupings on labels none of its metrics has, and
 * `queue` values that are not queues of the catalog.
 */
export function queryProblems(expr: string, queues: readonly string[]): string[] {
  const series = seriesCatalog();
  const problems: string[] = [];
  let parsed: ParsedQuery;
  try {
    parsed = parsePromQL(expr);
  } catch (err) {
    return [(err as Error).message];
  }
  if (parsed.selectors.length === 0) problems.push(`no metric in ${expr}`);
  const known = new Set<string>(TARGET_LABELS);
  for (const s of parsed.selectors) {
    const m = series.get(s.metric);
    if (!m) {
      problems.push(`unknown metric ${s.metric} in ${expr}`);
      continue;
    }
    const labels = new Set([...m.labels, ...TARGET_LABELS]);
    if (s.metric.endsWith("_bucket")) labels.add("le");
    for (const l of labels) known.add(l);
    for (const matcher of s.matchers) {
      if (!labels.has(matcher.label)) problems.push(`${s.metric} has no label ${matcher.label} (${expr})`);
      if (matcher.label === "queue" && /^[a-z|]+$/.test(matcher.value)) {
        for (const q of matcher.value.split("|")) if (!queues.includes(q)) problems.push(`no queue ${q} (${expr})`);
      }
    }
  }
  for (const g of parsed.grouping) if (!known.has(g)) problems.push(`grouping by ${g}, a label none of its metrics has (${expr})`);
  return problems;
}
