import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parse as parseSync } from "csv-parse/sync";
import { spreadsheetCsvRecord, spreadsheetCsvWriter } from "./write";

/**
 * The gateway's hand-written cell encoder as it was before @svc/csv wrote the job
 * downloads (services/gateway/src/jobs/download.ts, `csvCell`), kept verbatim as the
 * oracle: the downloads must stay byte for byte what it wrote.
 */
function handWrittenCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^[+-]?\d+(\.\d+)?$/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
/** A cell's text before quoting, as a CSV reader gives it back. */
function handWrittenText(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  return /^[=+\-@\t\r]/.test(text) && !/^[+-]?\d+(\.\d+)?$/.test(text) ? `'${text}` : text;
}
const handWrittenLine = (cells: readonly unknown[]) => `${cells.map(handWrittenCell).join(",")}\r\n`;

async function written<T>(items: readonly T[], toCells: (item: T) => readonly unknown[]): Promise<{ text: string; chunks: number }> {
  let text = "";
  let chunks = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString("utf8");
      chunks += 1;
      done();
    },
  });
  await pipeline(Readable.from(items), spreadsheetCsvWriter(toCells), sink);
  return { text, chunks };
}

/** A deterministic generator (a seeded LCG), so a failure replays. */
function randomCells(seed: number, records: number): unknown[][] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const alphabet = ["=", "+", "-", "@", "\t", "\r", "\n", '"', ",", ";", "'", " ", "a", "1", "0", ".", "é", "＝", "\u2028", "\\"];
  const text = () => Array.from({ length: Math.floor(next() * 8) }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  const value = (): unknown => {
    switch (Math.floor(next() * 12)) {
      case 0: return null;
      case 1: return undefined;
      case 2: return next() < 0.5;
      case 3: return Math.floor((next() - 0.5) * 1e6);
      case 4: return (next() - 0.5) * 1e3;
      case 5: return [-1e21, NaN, -Infinity, Infinity, 0, -0, 1e-7][Math.floor(next() * 7)];
      case 6: return { a: text(), b: [1, 'x,"y'] };
      case 7: return [text(), null];
      case 8: return new Date(Math.floor(next() * 2e12));
      case 9: return BigInt(Math.floor((next() - 0.5) * 1e6));
      default: return text();
    }
  };
  return Array.from({ length: records }, () => Array.from({ length: 1 + Math.floor(next() * 6) }, value));
}

describe("spreadsheetCsvRecord", () => {
  it.each<[string, unknown[], string]>([
    ["plain cells, CRLF after the record", ["a", "b", "c"], "a,b,c\r\n"],
    ["a comma, a quote and line breaks quoted, quotes doubled", ['12"34,56', "a,b", "line\nbreak", "cr\ronly", "crlf\r\nx"], '"12""34,56","a,b","line\nbreak","cr\ronly","crlf\r\nx"\r\n'],
    ["null, undefined and empty strings as empty fields", [null, undefined, "", "x"], ",,,x\r\n"],
    ["numbers, bigints and booleans as String() writes them", [42, -7, 0.5, 12345678901234567890n, true, false], "42,-7,0.5,12345678901234567890,true,false\r\n"],
    ["objects, arrays and dates as JSON", [{ a: 1, b: "x" }, ["y", null], new Date("2026-11-20T10:00:00.000Z")], '"{""a"":1,""b"":""x""}","[""y"",null]","""2026-11-20T10:00:00.000Z"""\r\n'],
    ["formulas get a leading apostrophe", ["=1+2", "+cmd@x.example", "-2+3", "@SUM(A1)", "\tx", "\rx"], "'=1+2,'+cmd@x.example,'-2+3,'@SUM(A1),'\tx,\"'\rx\"\r\n"],
    ["plain numbers, signed or not, stay data", ["+12025550101", "-5", "-0.25", "+3.5", -12], "+12025550101,-5,-0.25,+3.5,-12\r\n"],
    ["a guarded formula that needs quotes too", ['=HYPERLINK("http://x.example","click")', "=1\n+2"], '"\'=HYPERLINK(""http://x.example"",""click"")","\'=1\n+2"\r\n'],
    ["a number String() writes with an exponent is not plain", [-1e21, -Infinity], "'-1e+21,'-Infinity\r\n"],
    ["look-alikes and a leading apostrophe are left alone", ["＝1", "'=1", " =1"], "＝1,'=1, =1\r\n"],
    ["no cells: an empty line", [], "\r\n"],
  ])("%s", (_name, cells, line) => {
    expect(spreadsheetCsvRecord(cells)).toBe(line);
    expect(spreadsheetCsvRecord(cells)).toBe(handWrittenLine(cells));
  });

  it("reads back through csv-parse as the cells' spreadsheet text (20,000 random records): what it writes is CSV a real reader agrees on", () => {
    const records = randomCells(7, 20_000).filter((r) => r.length > 1 || (r[0] !== null && r[0] !== undefined && r[0] !== ""));
    const text = records.map((r) => spreadsheetCsvRecord(r)).join("");
    const read = parseSync(text, { relax_column_count: true, record_delimiter: "\r\n" }) as string[][];
    expect(read).toEqual(records.map((r) => r.map((v) => handWrittenText(v))));
  });

  it("writes every record exactly as the hand-written encoder did (20,000 random records)", () => {
    const records = randomCells(21, 20_000);
    const mismatches = records.filter((cells) => spreadsheetCsvRecord(cells) !== handWrittenLine(cells));
    expect(mismatches.slice(0, 3)).toEqual([]);
  });
});

describe("spreadsheetCsvWriter", () => {
  it("writes one line per item through toCells, the same bytes as the hand-written encoder", async () => {
    const records = randomCells(7, 1_000);
    const { text } = await written(records, (cells) => cells);
    expect(text).toBe(records.map(handWrittenLine).join(""));
  });

  it("gives the text in chunks of 64 lines, the rest at the end", async () => {
    const items = Array.from({ length: 130 }, (_, i) => i);
    const { text, chunks } = await written(items, (i) => [i, `row ${i}`]);
    expect(chunks).toBe(3);
    expect(text.split("\r\n")).toHaveLength(131);
    expect(text.startsWith("0,row 0\r\n1,row 1\r\n")).toBe(true);
    expect(text.endsWith("129,row 129\r\n")).toBe(true);
  });

  it("writes nothing for no items", async () => {
    expect(await written([], () => [])).toEqual({ text: "", chunks: 0 });
  });

  it("errors the stream when toCells throws", async () => {
    await expect(
      written([1, 2, 3], (i) => {
        if (i === 2) throw new Error("bad row");
        return [i];
      }),
    ).rejects.toThrow("bad row");
  });
});
