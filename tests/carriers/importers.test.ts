import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createStore, type Store } from "@svc/store";
import { USAGE } from "../../packages/admin/src/commands";
import { createTestEnv, type TestEnv } from "../support/env";

const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
const FIXTURES = path.resolve(__dirname, "..", "fixtures", "carriers");
const fixture = (name: string) => path.join(FIXTURES, name);
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Digits of blocks in the fixtures, valid or not: never echoed on stdout or stderr. */
const BLOCK_TEXT = ["202-555", "212-555", "312-555", "21A-555", "312,555", "23125", "2312600", "2312601", "12345", "1632 960", "7946 0", "01X1", "7700 90", "98765"];

let env: TestEnv;
let store: Store;
let tmp: string;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2, applicationName: "carrier-import-test" });
  tmp = mkdtempSync(path.join(tmpdir(), "carrier-import-"));
});
afterAll(async () => {
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
});

function admin(...args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl, KEY_HASH_SECRET: env.keyHashSecret },
    encoding: "utf8",
    timeout: 30_000,
  });
  for (const text of BLOCK_TEXT) {
    expect(res.stdout).not.toContain(text);
    expect(res.stderr).not.toContain(text);
  }
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, json: () => JSON.parse(res.stdout) as Record<string, unknown> };
}

/** An import that must succeed: exit 0, nothing on stderr (not a TTY: no progress bar), one JSON object on stdout. */
function importFile(source: string, file: string, ...flags: string[]) {
  const res = admin("carrier", "import", "--source", source, "--file", file, ...flags);
  expect(res.stderr).toBe("");
  expect(res.status).toBe(0);
  return res.json();
}

async function blocks(source: string): Promise<Array<{ prefix: string; country: string; carrier: string; effective_on: string | null; import_id: string }>> {
  const { rows } = await store.pool.query(
    `SELECT prefix, country, carrier, to_char(effective_on, 'YYYY-MM-DD') AS effective_on, import_id FROM carrier_blocks WHERE source = $1 ORDER BY prefix`,
    [source],
  );
  return rows;
}
const withoutImport = (rows: Awaited<ReturnType<typeof blocks>>) => rows.map(({ import_id: _, ...r }) => r);

describe("carrier import: each source's published layout", () => {
  it("reads NANPA's utilized CO codes (allutlzd.txt, tab separated): 1 + NPA-NXX, territories as their own country", async () => {
    const file = fixture("allutlzd.txt");
    const out = importFile("nanpa-co", file);
    expect(out).toEqual({
      object: "carrier_import",
      id: expect.stringMatching(/^cimp_[0-9A-Za-z]{22}$/),
      source: "nanpa-co",
      block_source: "nanpa_co_codes",
      files: [{ file_sha256: sha256(file), encoding: "utf-8", rows_read: 11 }],
      rows_read: 11,
      blocks_stored: 7,
      blocks_replaced: 0,
      rows_duplicate: 1,
      rows_skipped: { total: 3, reasons: { invalid_block: 1, missing_block: 1, missing_carrier: 1 } },
      created_at: expect.any(String),
    });
    expect(withoutImport(await blocks("nanpa_co_codes"))).toEqual([
      { prefix: "1202555", country: "US", carrier: "VERIZON WASHINGTON, DC INC.", effective_on: "1998-01-01" },
      // 31/12/2001 is not a month-first date: the block is kept without one.
      { prefix: "1206555", country: "US", carrier: "QWEST CORPORATION", effective_on: null },
      { prefix: "1212555", country: "US", carrier: "VERIZON NEW YORK, INC.", effective_on: "1998-01-01" },
      { prefix: "1312555", country: "US", carrier: "CELLCO PARTNERSHIP DBA VERIZON WIRELESS - IL", effective_on: "2004-03-15" },
      { prefix: "1415555", country: "US", carrier: "NEW CINGULAR WIRELESS PCS, LLC - CA", effective_on: "2009-11-02" },
      { prefix: "1670555", country: "MP", carrier: "MICRONESIAN TELECOMMUNICATIONS CORP.", effective_on: null },
      { prefix: "1787555", country: "PR", carrier: "PUERTO RICO TELEPHONE COMPANY, INC.", effective_on: "1999-07-01" },
    ]);
  });

  it("reads the pooling administrator's thousands-block report: 1 + NPA + NXX + X, assigned (AS) blocks only", async () => {
    const file = fixture("AllBlocksAugmentedReport.txt");
    const out = importFile("nanpa-thousands", file);
    expect(out).toMatchObject({
      block_source: "nanpa_thousands_blocks",
      files: [{ file_sha256: sha256(file), encoding: "utf-8", rows_read: 8 }],
      rows_read: 8,
      blocks_stored: 4,
      rows_duplicate: 0,
      // AV (available) block, a blank company, an X that is not a digit, an unclosed quote.
      rows_skipped: { total: 4, reasons: { invalid_block: 1, malformed_row: 1, missing_carrier: 1, not_assigned: 1 } },
    });
    expect(withoutImport(await blocks("nanpa_thousands_blocks"))).toEqual([
      { prefix: "12125550", country: "US", carrier: "LEVEL 3 COMMUNICATIONS, LLC - NY", effective_on: "2011-02-14" },
      { prefix: "13125550", country: "US", carrier: "CELLCO PARTNERSHIP DBA VERIZON WIRELESS - IL", effective_on: "2004-03-15" },
      { prefix: "13125551", country: "US", carrier: "BANDWIDTH.COM CLEC, LLC - IL", effective_on: "2012-06-01" },
      { prefix: "13125552", country: "US", carrier: "TWILIO INTERNATIONAL, INC.", effective_on: "2016-09-20" },
    ]);
  });

  it("reads Bundesnetzagentur exports (semicolons, Windows-1252 or UTF-8): 49 + area code + block, decade ranges reduced, mobile range codes whole", async () => {
    const local = fixture("bnetza-ortsnetze.csv");
    const mobile = fixture("bnetza-mobile.csv");
    expect(readFileSync(local).includes(Buffer.from([0xfc]))).toBe(true); // "ü" as one Windows-1252 byte
    // Both lists in one run: a later import of one of them alone would replace the other.
    const out = importFile("bnetza", local, "--file", mobile);
    expect(out).toMatchObject({
      files: [
        { file_sha256: sha256(local), encoding: "windows-1252", rows_read: 8 },
        { file_sha256: sha256(mobile), encoding: "utf-8", rows_read: 3 },
      ],
      rows_read: 11,
      blocks_stored: 6,
      // 040 without a block and 0180 (not a mobile range) without one, a range that is not whole decades,
      // an area code with a letter, no Zuteilungsnehmer.
      rows_skipped: { total: 5, reasons: { invalid_block: 2, missing_block: 2, missing_carrier: 1 } },
    });
    expect(withoutImport(await blocks("bnetza"))).toEqual([
      { prefix: "491511", country: "DE", carrier: "Telekom Deutschland GmbH", effective_on: "2009-10-01" },
      { prefix: "49176", country: "DE", carrier: "Telefónica Germany GmbH & Co. OHG", effective_on: null },
      { prefix: "49221555", country: "DE", carrier: "NetCologne Gesellschaft für Telekommunikation mbH", effective_on: "2001-06-30" },
      { prefix: "493023125", country: "DE", carrier: "Deutsche Telekom AG", effective_on: "1998-01-01" },
      { prefix: "493023126", country: "DE", carrier: "1&1 Versatel Deutschland GmbH", effective_on: "2005-03-15" },
      { prefix: "498912345", country: "DE", carrier: "M-net Telekommunikations GmbH", effective_on: "2010-11-02" },
    ]);
    const { rows } = await store.pool.query(`SELECT file_sha256 FROM carrier_imports WHERE id = $1`, [out.id]);
    expect(rows).toEqual([{ file_sha256: `${sha256(local)},${sha256(mobile)}` }]);
    // The same local list as UTF-8 gives the same blocks.
    const utf8 = path.join(tmp, "bnetza-utf8.csv");
    writeFileSync(utf8, new TextDecoder("windows-1252").decode(readFileSync(local)), "utf8");
    expect(importFile("bnetza", utf8, "--file", mobile)).toMatchObject({ files: [{ encoding: "utf-8" }, { encoding: "utf-8" }], blocks_stored: 6, blocks_replaced: 6 });
    expect(withoutImport(await blocks("bnetza")).map((b) => b.carrier)).toContain("NetCologne Gesellschaft für Telekommunikation mbH");
  });

  it("reads Ofcom's numbering data (S1.csv layout): 44 + the block without its 0, allocated blocks only, UK day-first dates", async () => {
    const out = importFile("ofcom", fixture("ofcom-S1.csv"));
    expect(out).toMatchObject({
      rows_read: 9,
      blocks_stored: 4,
      rows_skipped: { total: 5, reasons: { invalid_block: 1, missing_block: 1, missing_carrier: 1, not_assigned: 2 } },
    });
    expect(withoutImport(await blocks("ofcom"))).toEqual([
      { prefix: "441134960", country: "GB", carrier: "Virgin Media Limited", effective_on: "2012-11-30" },
      { prefix: "441632960", country: "GB", carrier: "Ofcom Drama Test Numbers Ltd", effective_on: "2009-02-01" },
      { prefix: "442079460", country: "GB", carrier: "British Telecommunications Plc", effective_on: "2004-03-15" },
      { prefix: "447700900", country: "GB", carrier: "Vodafone Limited", effective_on: "2001-06-12" },
    ]);
  });
});

describe("carrier import: idempotent, atomic per source", () => {
  it("re-importing the same file leaves the same blocks and records the run; a new file replaces only its source's blocks", async () => {
    const file = fixture("allutlzd.txt");
    const first = importFile("nanpa-co", file);
    const before = withoutImport(await blocks("nanpa_co_codes"));
    const again = importFile("nanpa-co", file);
    expect(again).toMatchObject({ files: first.files, blocks_stored: 7, blocks_replaced: 7, rows_duplicate: 1 });
    expect(again.id).not.toBe(first.id);
    expect(withoutImport(await blocks("nanpa_co_codes"))).toEqual(before);
    expect(new Set((await blocks("nanpa_co_codes")).map((b) => b.import_id))).toEqual(new Set([again.id]));

    const thousandsBefore = await blocks("nanpa_thousands_blocks");
    const smaller = path.join(tmp, "allutlzd-small.txt");
    writeFileSync(smaller, "State\tNPA-NXX\tOCN\tCompany\tRateCenter\tEffectiveDate\tUse\tAssignDate\tInitial/Growth\nNY\t917-555\t6664\tT-MOBILE USA, INC.\tNEW YORK CITY\t05/01/2008\tAS\t\tG\n");
    expect(importFile("nanpa-co", smaller)).toMatchObject({ rows_read: 1, blocks_stored: 1, blocks_replaced: 7 });
    expect(withoutImport(await blocks("nanpa_co_codes"))).toEqual([{ prefix: "1917555", country: "US", carrier: "T-MOBILE USA, INC.", effective_on: "2008-05-01" }]);
    expect(await blocks("nanpa_thousands_blocks")).toEqual(thousandsBefore);

    const { rows } = await store.pool.query(`SELECT source, file_sha256, rows_read, blocks_stored, blocks_replaced FROM carrier_imports WHERE id = $1`, [again.id]);
    expect(rows).toEqual([{ source: "nanpa_co_codes", file_sha256: sha256(file), rows_read: 11, blocks_stored: 7, blocks_replaced: 7 }]);
  });

  it("refuses a wrong header without touching the stored blocks, naming the columns and not echoing the first row", async () => {
    const stored = await blocks("ofcom");
    const file = path.join(tmp, "no-header.csv");
    writeFileSync(file, "01632 960,Allocated,1000,Ofcom Drama Test Numbers Ltd,01/02/2009\n07700 900,Allocated,1000,Vodafone Limited,12/06/2001\n");
    const res = admin("carrier", "import", "--source", "ofcom", "--file", file);
    expect(res.status).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(/wrong header for --source ofcom: missing columns Number Block or SABC, Status, Communications Provider/);
    expect(res.stderr).not.toContain("Vodafone");
    expect(await blocks("ofcom")).toEqual(stored);
  });

  it("refuses unknown sources and encodings, a missing or empty file", () => {
    expect(admin("carrier", "import", "--source", "itu", "--file", fixture("ofcom-S1.csv"))).toMatchObject({ status: 2, stderr: expect.stringContaining("sources are nanpa-co, nanpa-thousands, bnetza, ofcom") });
    expect(admin("carrier", "import", "--source", "ofcom", "--file", fixture("ofcom-S1.csv"), "--encoding", "ebcdic")).toMatchObject({ status: 2, stderr: expect.stringContaining("--encoding must be") });
    expect(admin("carrier", "import", "--source", "ofcom", "--file", path.join(tmp, "nope.csv"))).toMatchObject({ status: 2, stderr: expect.stringContaining("no such file") });
    expect(admin("carrier", "import", "--source", "ofcom")).toMatchObject({ status: 2, stderr: expect.stringContaining("--file is required") });
    const empty = path.join(tmp, "empty.csv");
    writeFileSync(empty, "");
    expect(admin("carrier", "import", "--source", "ofcom", "--file", empty)).toMatchObject({ status: 2, stderr: expect.stringContaining("is empty: expected a header row") });
  });

  it("draws a progress bar when stderr is a terminal, and still prints the one JSON object", () => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} carrier import --source ofcom --file ${JSON.stringify(fixture("ofcom-S1.csv"))}`;
    const res = spawnSync("script", ["-qfec", command, "/dev/null"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl, KEY_HASH_SECRET: env.keyHashSecret, TERM: "xterm-256color" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/carrier import ofcom \|.*\| 100% \| 9 rows/);
    expect(res.stdout).toContain('"object": "carrier_import"');
  });

  it("docs/carrier-importers.md shows the command the CLI takes and the object it prints", () => {
    const doc = readFileSync(path.resolve(__dirname, "..", "..", "docs", "carrier-importers.md"), "utf8");
    const usage = "carrier import --source nanpa-co|nanpa-thousands|bnetza|ofcom --file PATH [--file PATH…] [--encoding auto|utf-8|windows-1252]";
    expect(doc).toContain(`npm run admin -- ${usage}`);
    expect(USAGE).toContain(usage);
    const example = JSON.parse(/```json\n(\{\n  "object": "carrier_import"[\s\S]*?)```/.exec(doc)?.[1] ?? "{}") as Record<string, unknown>;
    const out = importFile("ofcom", fixture("ofcom-S1.csv"));
    expect(Object.keys(example)).toEqual(Object.keys(out));
    expect(Object.keys((example.files as object[])[0] ?? {})).toEqual(Object.keys((out.files as object[])[0] ?? {}));
  });
});
