import { readFileSync } from "node:fs";
import path from "node:path";
import { metricCatalog, registeredInSource, ROOT } from "./metric-catalog";

/**
 * docs/operations.md explains every metric the code registers: each `svc_` metric
 * (the metrics catalog, `svc_build_info`, and any `name: "svc_…"` in the source)
 * has a row in the metrics table with its type and exactly its labels, and the
 * table names nothing the code does not export.
 */
const doc = readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");

type Row = { type: string; labels: string[]; meaning: string };
function metricRows(): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const line of doc.split("\n")) {
    const m = /^\| `(svc_[a-z0-9_]+)` \| ([a-z]+) \| ([^|]*) \| (.+) \|$/.exec(line);
    if (!m) continue;
    const labels = [...(m[3] as string).matchAll(/`([a-z_]+)`/g)].map((x) => x[1] as string);
    rows.set(m[1] as string, { type: m[2] as string, labels, meaning: (m[4] as string).trim() });
  }
  return rows;
}

test("every svc_ metric the code registers has a row in docs/operations.md with its type and labels", () => {
  const rows = metricRows();
  const catalog = [...metricCatalog().values()].filter((m) => m.name.startsWith("svc_"));
  expect(catalog.length).toBeGreaterThan(20);
  for (const m of catalog) {
    const row = rows.get(m.name);
    expect({ metric: m.name, documented: row ? { type: row.type, labels: row.labels } : null }).toEqual({
      metric: m.name,
      documented: { type: m.type, labels: m.labels },
    });
    expect(row!.meaning.length).toBeGreaterThan(30);
  }
  const inSource = registeredInSource();
  for (const name of inSource) expect({ name, documented: rows.has(name) }).toEqual({ name, documented: true });
  // Nothing documented that the code does not export.
  const exported = new Set([...catalog.map((m) => m.name), ...inSource]);
  for (const name of rows.keys()) expect({ name, exported: exported.has(name) }).toEqual({ name, exported: true });
});

test("the default process metrics the dashboard uses are named in the doc", () => {
  const dashboard = readFileSync(path.join(ROOT, "k8s", "monitoring", "dashboards", "svc-fleet.json"), "utf8");
  const used = new Set([...dashboard.matchAll(/\b((?:process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1] as string));
  expect(used.size).toBeGreaterThan(0);
  for (const name of used) expect({ name, inDoc: doc.includes(`\`${name}\``) }).toEqual({ name, inDoc: true });
});

test("the runbook keeps the sections operators and the lead rely on", () => {
  for (const heading of ["## Metrics", "## Alerts and runbooks", "## Scaling", "## Rolling out a migration", "## Reading a trace", "## Queue dashboard"]) {
    expect(doc).toContain(`\n${heading}\n`);
  }
  expect(doc).toContain("../k8s/README.md#upgrade-notes");
  expect(readFileSync(path.join(ROOT, "k8s", "README.md"), "utf8")).toContain("\n## Upgrade notes\n");
});
