#!/usr/bin/env node
// The import graph of packages/*/src and services/*/src, and the rules it must keep
// (docs/architecture.md, "Layers"). Run by tests/imports.test.ts, so CI runs it.
//
//   cycle           an import cycle inside one package or service (type-only and dynamic
//                   imports count: a cycle of types is still a knot to untie), one
//                   violation per file in the cycle
//   layer           an import that does not go down: to a package on the same or a higher
//                   floor of LAYERS, across the server/client line (a client may import
//                   only the packages of CLIENT_BRIDGE), or of a package LAYERS lacks; and
//                   inside a service that INNER_LAYERS draws, a file's import of a part on a
//                   higher floor or of another part of its floor, or a file on no part
//   service-import  one service importing another
//   sql             SQL text outside packages/store: a string or template literal with
//                   SELECT … FROM, DELETE FROM, INSERT INTO or UPDATE … SET (upper case),
//                   or any string literal passed to `.query(`
//   job-id          a queue job id built outside packages/queues: a template literal that
//                   starts with one of JOB_ID_PREFIXES and `-${` (`chunk-${`, `run-${`,
//                   `settle-${`, `finish-${`, `event-${`, …) or such a string + …, and any
//                   template or + concatenation given as a `jobId:` property
//
// Scanned: every .ts file under packages/*/src and services/*/src except *.test.ts and
// *.d.ts. Not scanned: tests/, bench/, scripts/ (they seed and inspect the database).
//
// KNOWN is a ratchet. It lists the violations that were there when the rules were
// written (issue 21 is refactoring them away), each with its issue and, for sql,
// job-id and imports, how many times it occurs in that file. The check fails on any
// violation KNOWN does not list (or a listed one occurring more often), and ALSO when
// a listed one occurs less often or no longer at all: then delete or lower its entry.
// So the list only shrinks: never add a line to make a new violation pass, fix the code.
// `--list` prints the current violations in KNOWN's format, to copy the lowered lines.
//
// Usage: node scripts/check-imports.mjs            check; exit 1 with a report on failure
//        node scripts/check-imports.mjs --list     print every current violation as a KNOWN line
//        node scripts/check-imports.mjs --json     the result as JSON
//        node scripts/check-imports.mjs --graph    which packages each package or service imports
//        --root DIR, --known FILE.json|none        (tests: another tree, another list)
//
// The graph is dependency-cruiser's (parser swc: TypeScript 7 ships no compiler API);
// the literal scans walk @swc/core's syntax tree, so comments never count.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise } from "dependency-cruiser";
import swc from "@swc/core";

/**
 * Floors, bottom up. A package imports only packages on a lower floor of its own side.
 * Clients (published on their own) stand apart: they may import the server side only
 * through CLIENT_BRIDGE (the SDK bundles the contract's schemas at build time).
 */
// prettier-ignore
const LAYERS = {
  "config":             { floor: 0, side: "server" }, // environment schema loading
  "process":            { floor: 0, side: "server" }, // what every process needs: logger with redaction, traces, ordered shutdown
  "metrics":            { floor: 0, side: "server" }, // metrics catalog and registry, readiness probes, the operations port
  "domain":             { floor: 0, side: "server" }, // business rules without I/O
  "csv":                { floor: 0, side: "server" }, // reading and writing CSV (csv-parse, csv-stringify)
  "contract":           { floor: 1, side: "server" }, // API schemas, error codes, OpenAPI (over domain)
  "store":              { floor: 1, side: "server" }, // Postgres: every SQL statement
  "queues":             { floor: 1, side: "server" }, // queues and completion notices on Redis (src/notices/), job ids
  "flows":              { floor: 2, side: "server" }, // business flows more than one service runs (test completion, settlement requests, event notices)
  "service-runner":     { floor: 2, side: "server" }, // a service process's frame: start-up wait, operations port, worker runner, leases
  "sources":            { floor: 2, side: "server" }, // data sources behind the checks
  "webhooks":           { floor: 2, side: "server" }, // customers' endpoints: address checks, signing, delivery
  "admin":              { floor: 3, side: "server" }, // operator CLI
  "vendor-simulator":   { floor: 3, side: "server" }, // stand-in vendor API for tests and bench
  "fleet-harness":      { floor: 3, side: "server" }, // starts built services, seeds accounts and keys: tests, bench, scripts
  "gateway":            { floor: 3, side: "server", service: true },
  "check-worker":       { floor: 3, side: "server", service: true },
  "billing-ledger":     { floor: 3, side: "server", service: true },
  "webhook-dispatcher": { floor: 3, side: "server", service: true },
  "sdk":                { floor: 0, side: "client" }, // TypeScript client of the API
  "cli":                { floor: 1, side: "client" }, // `svc`, over the SDK
  "mcp":                { floor: 1, side: "client" }, // `svc-mcp`, over the SDK
};
const CLIENT_BRIDGE = new Set(["contract"]);

/**
 * Floors inside a service, bottom up (its README says what each part holds). A part
 * names files and folders under src/; a file imports files of its own part or of a
 * lower floor, never a higher floor nor another part of its own floor (so the gateway's
 * features never import each other, and planning never imports http nor http planning).
 */
// prettier-ignore
const INNER_LAYERS = {
  gateway: [
    { base: ["config.ts", "time.ts", "tracing.ts", "bootstrap.ts", "caller.ts", "cache/", "reads/"] },
    { deps: ["deps.ts"] },
    { http: ["http/"], requests: ["planning/", "pricing/", "storing/"] },
    { intake: ["bulk/"] },
    {
      lookups: ["lookups/"], jobs: ["jobs/"], account: ["account/"], "webhook-endpoints": ["webhook-endpoints/"],
      catalog: ["catalog/"], "test-keys": ["test-keys/"], system: ["system/"], pages: ["pages/"], "queue-dashboard": ["queue-dashboard/"],
    },
    { app: ["app.ts", "ops.ts"] },
    { main: ["main.ts"] },
  ],
};

// The prefixes of the fleet's queue job ids (chunk-<job>-<n>, run-<lookup>, …), one per kind of message.
const JOB_ID_PREFIXES = ["chunk", "run", "settle", "finish", "event", "attempt", "release", "complete-test"];
const SQL_OWNER = "store";
const JOB_ID_OWNER = "queues";

/** Tolerated for now; each must still occur exactly so (see the header). */
// prettier-ignore
const KNOWN = [
];

// ---------------------------------------------------------------------------

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const ROOT = path.resolve(option("--root") ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."));
const knownOption = option("--known");
const known = knownOption === undefined ? KNOWN : knownOption === "none" ? [] : JSON.parse(readFileSync(knownOption, "utf8"));

/** Every package and service with a src/ folder. */
function findUnits() {
  const units = [];
  for (const group of ["packages", "services"]) {
    const dir = path.join(ROOT, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      if (!existsSync(path.join(dir, name, "src"))) continue;
      const pkgFile = path.join(dir, name, "package.json");
      const pkgName = existsSync(pkgFile) ? JSON.parse(readFileSync(pkgFile, "utf8")).name : `@svc/${name}`;
      units.push({ name, group, dir: `${group}/${name}`, src: `${group}/${name}/src`, pkgName });
    }
  }
  return units;
}

const isScanned = (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith(".d.ts");

function listFiles(dir) {
  const out = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(rel));
    else if (isScanned(rel)) out.push(rel);
  }
  return out.sort();
}

/** The unit a repository path belongs to, if any. */
function unitOfPath(units, file) {
  return units.find((u) => file.startsWith(`${u.dir}/`));
}

/** Imports between files, and from files to units, as dependency-cruiser resolves them. */
async function importGraph(units) {
  const byPkgName = new Map(units.map((u) => [u.pkgName, u]));
  const result = await cruise(
    units.map((u) => u.src),
    {
      baseDir: ROOT,
      parser: "swc",
      tsPreCompilationDeps: true,
      exclude: { path: "\\.test\\.ts$|\\.d\\.ts$" },
      doNotFollow: { path: "(^|/)(dist|node_modules)/" },
    },
    { extensions: [".ts", ".js", ".json"], extensionAlias: { ".js": [".ts", ".js"] } },
  );
  const files = [];
  const local = new Map(); // file -> Set(file), inside one unit
  const crossing = []; // { file, from: unit, to: unitName, spec }
  for (const mod of result.output.modules) {
    const from = unitOfPath(units, mod.source);
    if (!from || !mod.source.startsWith(`${from.src}/`) || !isScanned(mod.source)) continue;
    files.push(mod.source);
    const targets = new Set();
    for (const dep of mod.dependencies) {
      let to;
      const spec = dep.module;
      const scoped = /^(@svc\/[^/]+)/.exec(spec);
      if (scoped) to = byPkgName.get(scoped[1])?.name ?? scoped[1].slice(5);
      else if (!dep.coreModule) to = unitOfPath(units, dep.resolved)?.name;
      if (to === undefined) continue;
      if (to === from.name && !scoped) {
        if (dep.resolved.startsWith(`${from.src}/`) && isScanned(dep.resolved)) targets.add(dep.resolved);
      } else {
        crossing.push({ file: mod.source, from: from.name, to, spec });
      }
    }
    local.set(mod.source, targets);
  }
  return { files: files.sort(), local, crossing };
}

/** Strongly connected components (Tarjan) of more than one file, or a file importing itself. */
function cycles(local) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of local.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (local.get(v) ?? new Set()).has(v)) out.push(scc.sort());
    }
  };
  for (const v of [...local.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** The shortest way from a file back to itself inside its component. */
function shortestCycle(local, start, members) {
  const prev = new Map();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length) {
    const v = queue.shift();
    for (const w of [...(local.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const pathBack = [v];
        while (pathBack[0] !== start) pathBack.unshift(prev.get(pathBack[0]));
        return [...pathBack, start];
      }
      if (!seen.has(w)) {
        seen.add(w);
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

// --- literal scans -----------------------------------------------------------

const SQL_TEXT = [/\bSELECT\b[\s\S]*?\bFROM\b/, /\bDELETE\s+FROM\b/, /\bINSERT\s+INTO\b/, /\bUPDATE\s+[\w."]+\s+SET\b/];
const JOB_ID_START = new RegExp(`^(${JOB_ID_PREFIXES.join("|")})-$`);

function lineIndex(bytes) {
  const starts = [0];
  for (let i = 0; i < bytes.length; i += 1) if (bytes[i] === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function walk(node, visit) {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (!node || typeof node !== "object") return;
  if (typeof node.type === "string") visit(node);
  for (const key of Object.keys(node)) {
    if (key === "span" || key === "ctxt") continue;
    const value = node[key];
    if (value && typeof value === "object") walk(value, visit);
  }
}

const literalText = (node) =>
  node.type === "StringLiteral" ? node.value : node.type === "TemplateLiteral" ? node.quasis.map((q) => q.raw).join("${…}") : null;

/** SQL literals and job-id literals of one file, with their lines. */
function scanLiterals(file) {
  // "0;" first: its span tells where byte 0 of this file is in swc's global positions.
  const text = readFileSync(path.join(ROOT, file), "utf8").replace(/^#!/, "//"); // a shebang, kept as long
  const source = `0;\n${text}`;
  const ast = swc.parseSync(source, { syntax: "typescript", tsx: false, comments: false, target: "es2022" });
  const base = ast.body[0].span.start;
  const lineOf = lineIndex(Buffer.from(source, "utf8"));
  const line = (node) => lineOf(node.span.start - base) - 1;
  const sql = new Map(); // span start -> line
  const jobIds = new Map();
  walk(ast.body.slice(1), (node) => {
    const text = literalText(node);
    if (text !== null && SQL_TEXT.some((re) => re.test(text))) sql.set(node.span.start, { line: line(node), text });
    if (node.type === "CallExpression") {
      let callee = node.callee;
      if (callee?.type === "OptionalChainingExpression") callee = callee.base;
      const first = node.arguments?.[0]?.expression;
      if (callee?.type === "MemberExpression" && callee.property?.type === "Identifier" && callee.property.value === "query" && first && literalText(first) !== null) {
        sql.set(first.span.start, { line: line(first), text: literalText(first) });
      }
    }
    // A template literal type (`types`, no `expressions`) builds no string at run time.
    if (node.type === "TemplateLiteral" && node.expressions?.length > 0 && JOB_ID_START.test(node.quasis[0].raw)) jobIds.set(node.span.start, { line: line(node), text: `\`${literalText(node)}\`` });
    if (node.type === "BinaryExpression" && node.operator === "+" && node.left.type === "StringLiteral" && JOB_ID_START.test(node.left.value)) jobIds.set(node.span.start, { line: line(node), text: `"${node.left.value}" + …` });
    if (node.type === "KeyValueProperty" && ["Identifier", "StringLiteral"].includes(node.key.type) && node.key.value === "jobId") {
      const v = node.value;
      if ((v.type === "TemplateLiteral" && v.expressions.length > 0) || (v.type === "BinaryExpression" && v.operator === "+")) {
        jobIds.set(v.span.start, { line: line(v), text: v.type === "TemplateLiteral" ? `jobId: \`${literalText(v)}\`` : "jobId: … + …" });
      }
    }
  });
  const byLine = (a, b) => a.line - b.line;
  return { sql: [...sql.values()].sort(byLine), jobIds: [...jobIds.values()].sort(byLine) };
}

/** The first finding's text, shortened, and how many more. */
function quote(findings) {
  const text = findings[0].text.replace(/\s+/g, " ").trim();
  const short = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return `${short}${findings.length > 1 ? ` (+${findings.length - 1} more)` : ""}`;
}

// --- the check -----------------------------------------------------------------

async function violations() {
  const units = findUnits();
  const found = new Map(); // key -> violation
  const add = (v) => {
    const key = keyOf(v);
    const had = found.get(key);
    if (had) {
      had.count += v.count;
      had.lines.push(...v.lines);
    } else found.set(key, { ...v, lines: [...v.lines] });
  };

  for (const u of units) {
    if (!LAYERS[u.name]) add({ kind: "layer", file: u.dir, to: u.name, count: 1, lines: [], detail: `${u.dir} has no line in LAYERS (scripts/check-imports.mjs): give it a floor` });
  }

  const graph = await importGraph(units);
  for (const scc of cycles(graph.local)) {
    const members = new Set(scc);
    for (const file of scc) {
      const loop = shortestCycle(graph.local, file, members).map((f) => path.posix.basename(f));
      add({ kind: "cycle", file, count: 1, lines: [], detail: `in a cycle of ${scc.length} files: ${loop.join(" → ")}` });
    }
  }

  for (const u of units) {
    const floors = INNER_LAYERS[u.name];
    if (!floors) continue;
    const partOf = (file) => {
      const rel = file.slice(u.src.length + 1);
      for (const [floor, parts] of floors.entries()) {
        for (const [name, paths] of Object.entries(parts)) if (paths.some((p) => (p.endsWith("/") ? rel.startsWith(p) : rel === p))) return { name, floor };
      }
      return null;
    };
    for (const [file, targets] of graph.local) {
      if (!file.startsWith(`${u.src}/`)) continue;
      const a = partOf(file);
      if (!a) {
        add({ kind: "layer", file, to: `${u.name}:?`, count: 1, lines: [], detail: `${file} is on no part of INNER_LAYERS.${u.name} (scripts/check-imports.mjs): give it one` });
        continue;
      }
      for (const target of targets) {
        const b = partOf(target);
        if (!b || b.name === a.name || b.floor < a.floor) continue; // a target on no part is reported as a file of its own
        const why = b.floor > a.floor ? `a higher floor (${b.floor} over ${a.floor})` : `another part of floor ${a.floor}`;
        add({ kind: "layer", file, to: `${u.name}:${b.name}`, count: 1, lines: [], detail: `imports ${target.slice(u.src.length + 1)} (${b.name}) from ${a.name}: ${why}` });
      }
    }
  }

  for (const { file, from, to, spec } of graph.crossing) {
    const a = LAYERS[from];
    const b = LAYERS[to];
    const v = { file, to, count: 1, lines: [] };
    if (!a) continue; // reported above
    if (!b) add({ ...v, kind: "layer", detail: `imports ${spec}, which has no line in LAYERS` });
    else if (a.service && b.service) add({ ...v, kind: "service-import", detail: `service ${from} imports service ${to} (${spec})` });
    else if (a.side === "server" && b.side === "client") add({ ...v, kind: "layer", detail: `imports the client package ${spec}: the server side never imports clients` });
    else if (a.side === "client" && b.side === "server") {
      if (!CLIENT_BRIDGE.has(to)) add({ ...v, kind: "layer", detail: `client imports the server package ${spec}; clients reach the server side only through ${[...CLIENT_BRIDGE].join(", ")}` });
    } else if (b.floor >= a.floor) add({ ...v, kind: "layer", detail: `imports ${spec} (floor ${b.floor}) from floor ${a.floor}: imports only go down` });
  }

  for (const u of units) {
    for (const file of listFiles(u.src)) {
      const { sql, jobIds } = scanLiterals(file);
      if (u.name !== SQL_OWNER && sql.length) add({ kind: "sql", file, count: sql.length, lines: sql.map((f) => f.line), detail: `SQL text outside packages/${SQL_OWNER}: ${quote(sql)}` });
      if (u.name !== JOB_ID_OWNER && jobIds.length) add({ kind: "job-id", file, count: jobIds.length, lines: jobIds.map((f) => f.line), detail: `queue job id built outside packages/${JOB_ID_OWNER}: ${quote(jobIds)}` });
    }
  }
  const uses = new Map(units.map((u) => [u.name, new Set()]));
  for (const { from, to } of graph.crossing) uses.get(from)?.add(to);
  return { files: graph.files.length, imports: [...graph.local.values()].reduce((n, s) => n + s.size, 0) + graph.crossing.length, found, uses };
}

const KINDS = ["cycle", "layer", "service-import", "sql", "job-id"];
const keyOf = (v) => `${v.kind}|${v.file}|${v.to ?? ""}`;
const order = (a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) || a.file.localeCompare(b.file) || (a.to ?? "").localeCompare(b.to ?? "");
const entryLine = (v, issue = 21) =>
  `  { kind: ${JSON.stringify(v.kind)}, file: ${JSON.stringify(v.file)},${v.to ? ` to: ${JSON.stringify(v.to)},` : ""} count: ${v.count}, issue: ${issue} },`;
const where = (v) => (v.lines.length ? `${v.file}:${v.lines.join(",")}` : v.file);

const { files, imports, found, uses } = await violations();
const current = [...found.values()].sort(order);

if (args.includes("--graph")) {
  // Which packages each one imports (not its tests), floor by floor: docs/architecture.md's table.
  const rank = (name) => (LAYERS[name] ? (LAYERS[name].side === "client" ? 10 : 0) + LAYERS[name].floor : 99);
  for (const [name, to] of [...uses].sort((x, y) => rank(x[0]) - rank(y[0]) || x[0].localeCompare(y[0]))) {
    const place = LAYERS[name] ? `${LAYERS[name].side} ${LAYERS[name].floor}` : "unlisted";
    console.log(`${name.padEnd(20)} ${place.padEnd(9)} ${[...to].sort().join(", ") || "—"}`);
  }
  process.exit(0);
}

if (args.includes("--list")) {
  for (const v of current) console.log(entryLine(v, known.find((k) => keyOf(k) === keyOf(v))?.issue ?? 21));
  process.exit(0);
}

const knownByKey = new Map();
const problems = [];
for (const k of known) {
  if (!KINDS.includes(k.kind) || !k.file || !Number.isInteger(k.count) || !Number.isInteger(k.issue)) problems.push({ kind: "list", file: k.file ?? "?", detail: `malformed KNOWN entry (kind, file, count and issue are required): ${JSON.stringify(k)}` });
  else if (knownByKey.has(keyOf(k))) problems.push({ kind: "list", file: k.file, detail: `listed twice: ${keyOf(k)}` });
  else knownByKey.set(keyOf(k), k);
}
const unexpected = [];
const stale = [];
for (const v of current) {
  const k = knownByKey.get(keyOf(v));
  if (!k) unexpected.push({ ...v, why: "new" });
  else if (v.count > k.count) unexpected.push({ ...v, why: `occurs ${v.count} times, ${k.count} listed` });
  else if (v.count < k.count) stale.push({ ...k, why: `occurs ${v.count} times now, ${k.count} listed: lower its count` });
}
for (const k of knownByKey.values()) if (!found.has(keyOf(k))) stale.push({ ...k, why: "no longer occurs: delete its entry" });

const tally = (list) => KINDS.map((kind) => `${kind} ${list.filter((v) => v.kind === kind).length}`).join(", ");

if (args.includes("--json")) {
  console.log(JSON.stringify({ files, imports, violations: current, unexpected, stale, problems }, null, 2));
  process.exit(unexpected.length || stale.length || problems.length ? 1 : 0);
}

if (!unexpected.length && !stale.length && !problems.length) {
  console.log(`check-imports: ${files} files, ${imports} imports; nothing new. Known violations still tolerated (${known.length}: ${tally(known)}), issues ${[...new Set(known.map((k) => k.issue))].join(", ") || "none"}.`);
  process.exit(0);
}

const table = (rows) => {
  const w1 = Math.max(4, ...rows.map((r) => r.kind.length));
  const w2 = Math.max(4, ...rows.map((r) => r.at.length));
  return rows.map((r) => `  ${r.kind.padEnd(w1)}  ${r.at.padEnd(w2)}  ${r.detail}`).join("\n");
};
const out = [`check-imports: FAILED (${files} files, ${imports} imports scanned)`];
if (problems.length) out.push("", "The KNOWN list itself:", table(problems.map((p) => ({ kind: p.kind, at: p.file, detail: p.detail }))));
if (unexpected.length) {
  out.push(
    "",
    `${unexpected.length} violation(s) not in the known list — fix the code (rules: docs/architecture.md, "Layers"):`,
    table(unexpected.map((v) => ({ kind: v.kind, at: where(v), detail: `${v.detail}${v.why === "new" ? "" : ` (${v.why})`}` }))),
  );
}
if (stale.length) {
  out.push(
    "",
    `${stale.length} known violation(s) fixed or reduced — shrink KNOWN in scripts/check-imports.mjs (the list only shrinks):`,
    table(stale.map((k) => ({ kind: k.kind, at: k.file, detail: `${k.to ? `→ ${k.to}: ` : ""}${k.why}` }))),
  );
  const lowered = stale.filter((k) => found.has(keyOf(k)));
  if (lowered.length) out.push("  new lines for the reduced ones:", ...lowered.map((k) => entryLine(found.get(keyOf(k)), k.issue)));
}
console.error(out.join("\n"));
process.exit(1);
