import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SCOPES } from "@svc/domain";
import { Client, type Estimate, type Job, type Lookup, type ResultRow, type Usage, type WebhookEndpoint } from "@svc/sdk";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { CONTROL, parsed, SVC, svc, svcInTty, type Run } from "./run";

/**
 * `svc` as a child process against the real gateway (a real HTTP server on loopback
 * with real Postgres and Redis), in test mode: exit codes, `--json` output checked
 * against what the API itself answers (read back with the SDK), tables for people,
 * stdin input, downloads, and help on every command. Live jobs and the progress bar
 * are in live.test.ts; `webhooks verify` in verify.test.ts; the key in key-safety.test.ts.
 */
let gw: TestGateway;
let k: TestKey;
let api: Client;
const dir = mkdtempSync(path.join(tmpdir(), "svc-cli-"));
const run = (args: string[], opts: { input?: string; key?: string | null } = {}) =>
  svc(args, { key: opts.key === null ? undefined : (opts.key ?? k.key), baseUrl: gw.url, input: opts.input });
const ok = (r: Run) => {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};

beforeAll(async () => {
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8" } });
  k = await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: [...DEFAULT_SCOPES, "webhooks:manage"] });
  api = new Client({ apiKey: k.key, baseUrl: gw.url });
});
afterAll(async () => {
  await gw?.close();
});

describe("svc lookup", () => {
  it("identifiers as arguments: a table for people, the API's lookup object with --json", async () => {
    const human = ok(await run(["lookup", "+12025550101", "deliverable@example.com"]));
    expect(human.stdout).toMatch(/^lookup\s+lkp_/m);
    expect(human.stdout).toMatch(/ROW\s+IDENTIFIER\s+CHECK\s+STATUS\s+REGISTERED\s+DETAILS/);
    expect(human.stdout).toMatch(/1\s+\+12025550101\s+number\.spam\s+ok\s+yes\s+.*risk_level=high/);
    expect(human.stdout).toMatch(/2\s+deliverable@example\.com\s+email\s+ok\s+yes/);
    expect(human.stdout).not.toMatch(CONTROL);

    const r = ok(await run(["--json", "lookup", "--checks", "spam,email", "+12025550101", "deliverable@example.com"]));
    const lookup = parsed<Lookup>(r);
    expect(lookup).toMatchObject({ object: "lookup", status: "completed", livemode: false, checks: ["number.spam", "email"] });
    // The printed object is the API's own: the same lookup read back through the API.
    const read = await api.lookups.get(lookup.id);
    expect({ ...lookup, results: lookup.results.map((x) => ({ ...x, input: undefined })) }).toEqual({ ...read, results: read.results.map((x) => ({ ...x, input: undefined })) });
    expect(r.stderr).toBe("");
  });

  it("identifiers from stdin, one per line (blank lines and # comments skipped), and `-` mixed with arguments", async () => {
    const r = ok(await run(["lookup", "--json"], { input: "# list\n+12025550100\n\n+12025550102\r\nundeliverable@example.com\n" }));
    const lookup = parsed<Lookup>(r);
    expect(lookup.results.map((x: ResultRow) => x.e164 ?? x.email)).toEqual(["+12025550100", "+12025550102", "undeliverable@example.com"]);
    expect(lookup.checks).toEqual(["number.spam", "email"]); // the defaults for numbers and addresses
    const mixed = parsed<Lookup>(ok(await run(["lookup", "--json", "+12025550103", "-"], { input: "+12025550100\n" })));
    expect(mixed.results.map((x: ResultRow) => x.e164)).toEqual(["+12025550103", "+12025550100"]);
  });

  it("a pending lookup is followed to completion by default; --no-follow prints it pending", async () => {
    const followed = ok(await run(["--json", "lookup", "--wait", "0", "+12025550107"]));
    expect(parsed<Lookup>(followed).status).toBe("completed");
    expect(followed.stderr).toMatch(/lkp_\S+ is pending; waiting/);
    const pending = parsed<Lookup>(ok(await run(["--json", "lookup", "--wait", "0", "--no-follow", "+12025550109"])));
    expect(pending).toMatchObject({ status: "pending", next: { poll_url: `${gw.url}/v1/lookups/${pending.id}` } });
  });

  it("exit 2 for usage errors (nothing sent), 3 for the API's refusals with code, message and request id", async () => {
    const none = await run(["lookup"], { input: "" });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/No numbers or e-mail addresses/);
    const badWait = await run(["lookup", "--wait", "99", "+12025550100"]);
    expect(badWait.code).toBe(2);
    expect(badWait.stderr).toMatch(/--wait must be a whole number from 0 to 30/);
    const unknownOption = await run(["lookup", "--bogus", "+12025550100"]);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/unknown option '--bogus'/);

    const refused = await run(["lookup", "--checks", "no_such_check", "+12025550100"]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/code: invalid_request \(HTTP 400\), param: checks\[0\]/);
    expect(refused.stderr).toMatch(/request id: req_/);
    const asJson = await run(["lookup", "--json", "--checks", "no_such_check", "+12025550100"]);
    expect(asJson.code).toBe(3);
    expect(asJson.stdout).toBe("");
    expect(JSON.parse(asJson.stderr).error).toMatchObject({ code: "invalid_request", status: 400, retryable: false, param: "checks[0]", request_id: expect.stringMatching(/^req_/), doc_url: expect.stringContaining("/docs/errors#invalid_request") });
    const tooMany = await run(["lookup", ...Array.from({ length: 101 }, (_, i) => `+1202555${String(1000 + i * 37).padStart(4, "0")}`)]);
    expect(tooMany.code).toBe(3);
    expect(tooMany.stderr).toMatch(/too_many_numbers/);
  });
});

describe("svc jobs", () => {
  const csv = "phone,email\n+12025550100,deliverable@example.com\n+12025550101,\n+999123,undeliverable@example.com\n";
  const text = "+12025550100\n+12025550101\n+12025550102\ndeliverable@example.com\n";

  it("estimate and create from a CSV file, a text file and stdin; --json objects are the API's", async () => {
    const file = path.join(dir, "list.csv");
    writeFileSync(file, csv);
    const estimate = parsed<Estimate>(ok(await run(["jobs", "estimate", file, "--checks", "spam,email", "--json"])));
    expect(estimate).toMatchObject({ object: "estimate", rows: { total: 5, invalid: 1 }, max_cost: { currency: "USD" } });
    const human = ok(await run(["jobs", "estimate", file, "--checks", "spam,email"]));
    expect(human.stdout).toMatch(/^rows\s+5 \(4 valid, 1 invalid, 0 duplicate\)$/m);
    expect(human.stdout).toMatch(/CHECK\s+ROWS\s+CACHED\s+UNIT PRICE\s+MAX COST/);

    const job = parsed<Job>(ok(await run(["jobs", "create", file, "-c", "spam", "-c", "email", "--max-cost", "5", "--json"])));
    expect(job).toMatchObject({ object: "job", status: "completed", progress: { total: 5 }, max_cost: { amount: "5.00" }, estimate: { rows: { total: 5 } } });
    const { estimate: _created, ...rest } = job;
    expect(await api.jobs.get(job.id)).toEqual(rest);

    const txt = path.join(dir, "list.txt");
    writeFileSync(txt, text);
    const fromText = parsed<Job>(ok(await run(["--json", "jobs", "create", txt, "--checks", "spam,email"])));
    expect(fromText.progress).toMatchObject({ total: 4, checks_total: 4 });
    const fromStdin = parsed<Job>(ok(await run(["jobs", "create", "-", "--checks", "spam", "--json"], { input: "+12025550100\n+12025550103\n" })));
    expect(fromStdin.progress.total).toBe(2);
    const rows = await api.jobs.results(fromStdin.id).toArray();
    expect(rows.map((r) => r.e164)).toEqual(["+12025550100", "+12025550103"]);

    const table = ok(await run(["jobs", "create", txt, "--checks", "spam,email"]));
    expect(table.stdout).toMatch(/^job\s+job_\S+$/m);
    expect(table.stdout).toMatch(/^status\s+completed \(test mode\)$/m);
    expect(table.stdout).toMatch(/svc jobs download job_\S+ -o results\.csv/);
  });

  it("create --wait on a test job (final at once) prints the job; exit 0; no progress bar off a terminal", async () => {
    const txt = path.join(dir, "wait.txt");
    writeFileSync(txt, text);
    const r = ok(await run(["jobs", "create", txt, "--checks", "spam,email", "--wait"]));
    expect(r.stdout).toMatch(/^status\s+completed/m);
    expect(r.stderr).toMatch(/^Created job_\S+: 4 rows, max cost \d+\.\d+ USD\.$/m);
    expect(r.stderr).not.toMatch(CONTROL);
  });

  it("refusals and mistakes: --checks required, missing file, bad --max-cost (exit 2); a CSV the API cannot read (exit 3)", async () => {
    const txt = path.join(dir, "cost.txt");
    writeFileSync(txt, text);
    const noChecks = await run(["jobs", "create", txt]);
    expect(noChecks.code).toBe(2);
    expect(noChecks.stderr).toMatch(/required option '-c, --checks <codes>' not specified/);
    const missing = await run(["jobs", "create", path.join(dir, "nope.csv"), "--checks", "spam"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read .*nope\.csv \(ENOENT\)/);
    const badCost = await run(["jobs", "create", txt, "--checks", "spam", "--max-cost", "5 euros"]);
    expect(badCost.code).toBe(2);
    expect(badCost.stderr).toMatch(/--max-cost must be an amount in USD/);
    const badFile = path.join(dir, "bad.csv");
    writeFileSync(badFile, 'phone\n"unbalanced\n');
    const unreadable = await run(["jobs", "create", badFile, "--checks", "spam"]);
    expect(unreadable.code).toBe(3);
    expect(unreadable.stderr).toMatch(/code: invalid_request \(HTTP 400\), param: file/);
  });

  it("get, watch (final at once), results as a table and as NDJSON of result items, with filters and --limit", async () => {
    const job = await api.jobs.create({ numbers: ["+12025550100", "+12025550101", "+12025550102", "+12025550103", "+12025550105", "+999123"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    const got = parsed<Job>(ok(await run(["jobs", "get", job.id, "--json"])));
    expect(got).toEqual(await api.jobs.get(job.id));
    const watched = ok(await run(["jobs", "watch", job.id]));
    expect(watched.stdout).toMatch(/^progress\s+7\/7 checks done \(100 %\), 7 rows/m);

    const nd = ok(await run(["jobs", "results", job.id, "--json", "--page-size", "2"]));
    const items = nd.stdout.trim().split("\n").map((l) => JSON.parse(l) as ResultRow);
    expect(items).toEqual(await api.jobs.results(job.id).toArray());
    const table = ok(await run(["jobs", "results", job.id, "--page-size", "3"]));
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ROW\s+IDENTIFIER\s+CHECK\s+STATUS\s+REGISTERED\s+DETAILS$/);
    expect(lines).toHaveLength(2 + 7); // header, rule, one line per check of each row
    expect(table.stdout).toMatch(/^\s+6\s+\S+\s+number\.spam\s+invalid\s+-$/m); // an invalid number: masked input, no check ran

    const registered = ok(await run(["jobs", "results", job.id, "--service", "spam", "--registered", "true", "--json"]));
    expect(registered.stdout.trim().split("\n").map((l) => JSON.parse(l).e164)).toEqual(["+12025550101", "+12025550102", "+12025550103"]);
    const limited = ok(await run(["jobs", "results", job.id, "--json", "--limit", "2"]));
    expect(limited.stdout.trim().split("\n")).toHaveLength(2);
    // A reader that stops early (`| head -n 1`) ends the output quietly: exit 0, no EPIPE trace.
    const head = spawn(process.execPath, [SVC, "jobs", "results", job.id, "--json", "--page-size", "1"], { env: { PATH: process.env.PATH ?? "", SVC_API_KEY: k.key, SVC_BASE_URL: gw.url }, stdio: ["ignore", "pipe", "pipe"] });
    let headErr = "";
    head.stderr.on("data", (d: Buffer) => (headErr += d.toString("utf8")));
    const firstLine = await new Promise<string>((resolve) => {
      let buf = "";
      head.stdout.on("data", (d: Buffer) => {
        buf += d.toString("utf8");
        if (buf.includes("\n")) {
          head.stdout.destroy(); // the reader goes away, as head does
          resolve(buf.split("\n")[0]!);
        }
      });
    });
    expect(JSON.parse(firstLine).row_no).toBe(1);
    expect(await new Promise((resolve) => head.on("close", (code) => resolve(code)))).toBe(0);
    expect(headErr).toBe("");
    const badFilter = await run(["jobs", "results", job.id, "--registered", "maybe"]);
    expect(badFilter.code).toBe(2);
    const notFound = await run(["jobs", "get", "job_doesNotExist"]);
    expect(notFound.code).toBe(3);
    expect(notFound.stderr).toMatch(/code: not_found \(HTTP 404\)/);
  });

  it("download -o FILE (CSV by default, NDJSON by extension or --format) and -o - to stdout", async () => {
    const job = await api.jobs.create({ numbers: ["+12025550100", "+12025550101"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    const csvFile = path.join(dir, "out.csv");
    const r = ok(await run(["jobs", "download", job.id, "-o", csvFile]));
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`Saved ${job.id}'s results \\(CSV, [\\d,]+ bytes\\) to ${csvFile.replace(/[/.]/g, "\\$&")}`));
    const sdkCopy = path.join(dir, "sdk.csv");
    await api.jobs.download(job.id, { format: "csv", to: sdkCopy });
    expect(readFileSync(csvFile, "utf8")).toBe(readFileSync(sdkCopy, "utf8"));
    expect(readFileSync(csvFile, "utf8").split("\n")[0]).toMatch(/^row_no,input_masked,e164,/);

    const ndFile = path.join(dir, "out.ndjson");
    const meta = parsed(ok(await run(["--json", "jobs", "download", job.id, "--output", ndFile])));
    expect(meta).toMatchObject({ job: job.id, file: ndFile, format: "ndjson", bytes: readFileSync(ndFile).length });
    expect(readFileSync(ndFile, "utf8").trim().split("\n").map((l) => JSON.parse(l).row_no)).toEqual([1, 2, 3]);

    const toStdout = ok(await run(["jobs", "download", job.id, "-o", "-", "--format", "csv"]));
    expect(toStdout.stdout).toBe(readFileSync(sdkCopy, "utf8"));
    const noOutput = await run(["jobs", "download", job.id]);
    expect(noOutput.code).toBe(2);
    expect(noOutput.stderr).toMatch(/required option '-o, --output <file>'/);
  });

  it("cancel refuses a finished job (it would purge); purge needs --yes, then results are gone", async () => {
    const job = await api.jobs.create({ numbers: ["+12025550100"], checks: ["spam"] });
    const cancel = await run(["jobs", "cancel", job.id]);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toMatch(/already completed; nothing to cancel/);
    expect((await api.jobs.get(job.id)).purged_at).toBeNull();
    const unconfirmed = await run(["jobs", "purge", job.id]);
    expect(unconfirmed.code).toBe(2);
    const purged = parsed<Job>(ok(await run(["jobs", "purge", job.id, "--yes", "--json"])));
    expect(purged.purged_at).not.toBeNull();
    const gone = await run(["jobs", "results", job.id]);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toMatch(/not_found/);
  });
});

describe("account, limits, usage, services", () => {
  it("account and limits: tables for people, the API's objects with --json", async () => {
    const account = ok(await run(["account"]));
    expect(account.stdout).toMatch(new RegExp(`^account\\s+${k.accountId} \\(Test account\\)$`, "m"));
    expect(account.stdout).toMatch(/^balance\s+10\.00 USD$/m);
    expect(parsed(ok(await run(["account", "--json"])))).toEqual(await api.account.get());
    const limits = ok(await run(["limits"]));
    expect(limits.stdout).toMatch(/^per lookup\s+100 identifiers/m);
    expect(parsed(ok(await run(["--json", "limits"])))).toMatchObject({ object: "limits", request_sizes: { lookup_identifiers: 100 } });
  });

  it("usage: a table with a total row; --group-by check; --json is the API's usage; the bar chart only on a terminal", async () => {
    await api.lookups.create({ numbers: ["+12025550100"], checks: ["spam"] });
    const today = new Date().toISOString().slice(0, 10);
    const table = ok(await run(["usage", "--from", "-2d", "--to", "today"]));
    expect(table.stdout).toMatch(/DAY\s+CHECKS\s+CONCLUSIVE\s+CACHED\s+BILLED\s+COST/);
    expect(table.stdout).toMatch(new RegExp(`^${today}\\s+[1-9]\\d*\\s+`, "m"));
    expect(table.stdout).toMatch(/^total\s+/m);
    expect(table.stdout).not.toMatch(/Daily/); // a pipe gets the table alone
    const usage = parsed<Usage>(ok(await run(["usage", "--from", "-2d", "--to", "today", "--json"])));
    expect(usage).toEqual(await api.usage.get({ from: usage.from, to: usage.to }));
    expect(usage.data).toHaveLength(3);
    const byCheck = ok(await run(["usage", "--from", today, "--to", today, "--group-by", "check"]));
    expect(byCheck.stdout).toMatch(/^number\.spam\s+[1-9]/m);

    const tty = await svcInTty(["usage", "--from", "-2d", "--to", "today"], { key: k.key, baseUrl: gw.url });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/Daily checks \(nothing in this range was billed\)/); // test mode is never billed
    expect(tty.stdout).toMatch(new RegExp(`${today} │█+`));

    const missing = await run(["usage", "--to", "today"]);
    expect(missing.code).toBe(2);
    const badDay = await run(["usage", "--from", "2026-13-45", "--to", "today"]);
    expect(badDay.code).toBe(2);
    const reversed = await run(["usage", "--from", "2026-01-10", "--to", "2026-01-01"]);
    expect(reversed.code).toBe(3);
  });

  it("services works without a key (public catalog) and with one (the account's)", async () => {
    const pub = ok(await run(["services"], { key: null }));
    expect(pub.stdout).toMatch(/^Public catalog/m);
    expect(pub.stdout).toMatch(/^number\.spam\s+spam\s+number\s+yes/m);
    const own = parsed<{ account_specific: boolean }>(ok(await run(["services", "--json"])));
    expect(own).toEqual(await api.services.list());
    expect(own.account_specific).toBe(true);
  });

  it("without SVC_API_KEY, commands that need one exit 2 naming the variable, and send nothing", async () => {
    const r = await run(["account"], { key: null });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SVC_API_KEY/);
  });
});

describe("svc webhooks", () => {
  it("create (secret shown once), list, update, test, delete; --json objects are the API's", async () => {
    const made = parsed<WebhookEndpoint>(ok(await run(["--json", "webhooks", "create", "--url", "https://127.0.0.1:9/hooks", "--events", "job.completed"])));
    expect(made).toMatchObject({ object: "webhook_endpoint", status: "pending_verification", events: ["job.completed"], secret: expect.stringMatching(/^whsec_/) });
    const human = ok(await run(["webhooks", "create", "--url", "https://127.0.0.1:9/other", "--events", "job.completed,lookup.completed"]));
    expect(human.stdout).toMatch(/^secret\s+whsec_/m);
    expect(human.stderr).toMatch(/shown only once/);

    const list = ok(await run(["webhooks", "list"]));
    expect(list.stdout).toMatch(/ID\s+URL\s+EVENTS\s+STATUS\s+MODE\s+CREATED/);
    expect(list.stdout).toContain(made.id);
    expect(parsed(ok(await run(["webhooks", "list", "--json"])))).toEqual(await api.webhookEndpoints.list());

    const updated = parsed<WebhookEndpoint>(ok(await run(["webhooks", "update", made.id, "--events", "job.completed", "--events", "lookup.completed", "--json"])));
    expect(updated.events).toEqual(["job.completed", "lookup.completed"]);
    const nothing = await run(["webhooks", "update", made.id]);
    expect(nothing.code).toBe(2);
    const tested = ok(await run(["webhooks", "test", made.id]));
    expect(tested.stdout).toMatch(new RegExp(`^Queued webhook\\.test event evt_\\S+ for ${made.id}\\.$`, "m"));
    const deleted = parsed(ok(await run(["webhooks", "delete", made.id, "--json"])));
    expect(deleted).toEqual({ id: made.id, object: "webhook_endpoint", deleted: true });
    expect((await api.webhookEndpoints.list()).data.map((e) => e.id)).not.toContain(made.id);
    const again = await run(["webhooks", "delete", made.id]);
    expect(again.code).toBe(3);
    const plain = await run(["webhooks", "create", "--url", "http://127.0.0.1:9/plain", "--events", "job.completed"]);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(/param: url/);
  });
});

describe("network and answers that are not the API's", () => {
  it("exit 4 when nothing answers (connection refused), 5 when the answer is not the documented shape", async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const refused = await svc(["account"], { key: k.key, baseUrl: `http://127.0.0.1:${closed}` });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/Could not reach the API .*ECONNREFUSED.*\(connection_error\)/);

    // A real HTTP server that is not the API: a proxy's HTML page with 200.
    const proxy: Server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>captive portal</html>"));
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const wrong = await svc(["account", "--json"], { key: k.key, baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      expect(wrong.code).toBe(5);
      expect(JSON.parse(wrong.stderr).error).toMatchObject({ code: "invalid_response", status: 200 });
    } finally {
      proxy.close();
    }
    const badUrl = await svc(["account"], { key: k.key, baseUrl: "not a url" });
    expect(badUrl.code).toBe(2);
  });
});

describe("help and version", () => {
  const COMMANDS = [
    [],
    ["lookup"],
    ["jobs"],
    ["jobs", "estimate"],
    ["jobs", "create"],
    ["jobs", "get"],
    ["jobs", "watch"],
    ["jobs", "cancel"],
    ["jobs", "purge"],
    ["jobs", "results"],
    ["jobs", "download"],
    ["account"],
    ["limits"],
    ["usage"],
    ["services"],
    ["webhooks"],
    ["webhooks", "list"],
    ["webhooks", "create"],
    ["webhooks", "update"],
    ["webhooks", "delete"],
    ["webhooks", "test"],
    ["webhooks", "verify"],
  ];

  it("--help on every command: usage on stdout, exit 0, nothing sent (no key needed)", async () => {
    const listed = ok(await svc(["--help"]));
    for (const name of ["lookup", "jobs", "account", "limits", "usage", "services", "webhooks"]) expect(listed.stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    expect(listed.stdout).toMatch(/Exit codes:\n\s+0 /);
    const runs = await Promise.all(COMMANDS.map((c) => svc([...c, "--help"])));
    runs.forEach((r, i) => {
      expect({ command: COMMANDS[i], code: r.code }).toEqual({ command: COMMANDS[i], code: 0 });
      expect(r.stdout).toContain(`Usage: svc ${COMMANDS[i]!.join(" ")}`.trimEnd());
      expect(r.stderr).toBe("");
    });
  });

  it("--version prints the package's version; an unknown command exits 2 with a suggestion", async () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "packages", "cli", "package.json"), "utf8")) as { version: string };
    expect(ok(await svc(["--version"])).stdout.trim()).toBe(pkg.version);
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    const typo = await svc(["lokup"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown command 'lokup'[\s\S]*Did you mean lookup\?/);
    expect((await svc(["jobs"])).code).toBe(2); // a group without a subcommand: its help, on stderr
  });
});
