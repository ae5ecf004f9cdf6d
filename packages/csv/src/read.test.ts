import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { csvErrorCode, likeliestDelimiter, readCsvStream, readCsvText } from "./read";

describe("readCsvText", () => {
  it("drops a BOM, trims fields, skips blank lines, reads quotes", () => {
    const text = '\uFEFFnumber , name\r\n\r\n +12025550100 ,"Doe, ""J"""\r\n\r\n+12025550101,"two\nlines"\r\n';
    expect(readCsvText(text, { delimiter: ",", relaxColumnCount: false })).toEqual([
      ["number", "name"],
      ["+12025550100", 'Doe, "J"'],
      ["+12025550101", "two\nlines"],
    ]);
  });

  it.each([
    ["CRLF", "a,b\r\n1,2\r\n3,4\r\n", [["a", "b"], ["1", "2"], ["3", "4"]]],
    ["LF", "a,b\n1,2\n3,4", [["a", "b"], ["1", "2"], ["3", "4"]]],
    ["CR", "a,b\r1,2\r3,4\r", [["a", "b"], ["1", "2"], ["3", "4"]]],
    ["LF, then CRLF (the CR trimmed)", "a,b\n1,2\r\n3,4\n", [["a", "b"], ["1", "2"], ["3", "4"]]],
    ["CRLF, then a lone LF (text in the field)", "a,b\r\n1,2\n3,4\r\n", [["a", "b"], ["1", "2\n3", "4"]]],
  ])("ends records with the first line ending it finds: %s", (_name, text, records) => {
    expect(readCsvText(text, { delimiter: ",", relaxColumnCount: true })).toEqual(records);
  });

  it("reads the separator it is given", () => {
    expect(readCsvText("a;b\tc\n1;2\t3", { delimiter: ";", relaxColumnCount: false })).toEqual([["a", "b\tc"], ["1", "2\t3"]]);
    expect(readCsvText("a;b\tc\n1;2\t3", { delimiter: "\t", relaxColumnCount: false })).toEqual([["a;b", "c"], ["1;2", "3"]]);
  });

  it("takes records of another length only with relaxColumnCount", () => {
    const text = "a,b\n1\n1,2,3\n";
    expect(readCsvText(text, { delimiter: ",", relaxColumnCount: true })).toEqual([["a", "b"], ["1"], ["1", "2", "3"]]);
    expect(() => readCsvText(text, { delimiter: ",", relaxColumnCount: false })).toThrow(expect.objectContaining({ code: "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH" }));
  });

  it.each([
    ["an unclosed quote", 'a,b\n"1,2\n'],
    ["a quote inside an unquoted field", 'a,b\n1"x,2\n'],
    ["text after a closing quote", 'a,b\n"1"x,2\n'],
  ])("throws on %s (strict)", (_name, text) => {
    expect(() => readCsvText(text, { delimiter: ",", relaxColumnCount: true })).toThrow(expect.objectContaining({ code: expect.stringMatching(/^(CSV_|INVALID_OPENING_QUOTE$)/) }));
  });
});

async function streamed(text: string, options: { delimiter?: string; relaxColumnCount?: boolean; maxRecordBytes?: number; chunk?: number } = {}) {
  let malformed = 0;
  const records: string[][] = [];
  const bytes = Buffer.from(text, "utf8");
  const size = options.chunk ?? bytes.length;
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  await pipeline(
    Readable.from(chunks),
    readCsvStream({
      delimiter: options.delimiter ?? ",",
      relaxColumnCount: options.relaxColumnCount ?? false,
      maxRecordBytes: options.maxRecordBytes ?? 64 * 1024,
      onMalformed: () => {
        malformed += 1;
      },
    }),
    async (source: AsyncIterable<string[]>) => {
      for await (const record of source) records.push(record);
    },
  );
  return { records, malformed };
}

describe("readCsvStream", () => {
  it("reads the same records as readCsvText, however the bytes are cut", async () => {
    const text = '\uFEFFnumber , name\r\n\r\n +12025550100 ,"Doe, ""J"""\r\n+12025550101,"two\nlines"\r\n';
    for (const chunk of [1, 3, 1000]) {
      expect(await streamed(text, { chunk })).toEqual({ records: readCsvText(text, { delimiter: ",", relaxColumnCount: false }), malformed: 0 });
    }
  });

  it("keeps a quote inside an unquoted field as text", async () => {
    expect(await streamed('a,b\n12"34,x\n')).toEqual({ records: [["a", "b"], ['12"34', "x"]], malformed: 0 });
  });

  it("skips a record of another length and reports it once, unless relaxColumnCount", async () => {
    const text = "a,b\n1,2\n3\n4,5,6\n7,8\n";
    expect(await streamed(text)).toEqual({ records: [["a", "b"], ["1", "2"], ["7", "8"]], malformed: 2 });
    expect(await streamed(text, { relaxColumnCount: true })).toEqual({ records: [["a", "b"], ["1", "2"], ["3"], ["4", "5", "6"], ["7", "8"]], malformed: 0 });
  });

  it("skips a record longer than maxRecordBytes and reports it once", async () => {
    const { records, malformed } = await streamed(`a,b\n1,${"x".repeat(200)}\n2,y\n`, { maxRecordBytes: 100 });
    expect(malformed).toBe(1);
    expect(records[0]).toEqual(["a", "b"]);
  });

  it("errors with a CSV_ code the caller can tell from a file error", async () => {
    const thrown = await streamed("a,b\n1,2\n", { delimiter: "" }).catch((err: unknown) => err);
    expect(csvErrorCode(thrown)).toMatch(/^CSV_/);
  });
});

describe("csvErrorCode", () => {
  it("is null for anything but a parser's error", () => {
    expect(csvErrorCode(Object.assign(new Error("no such file"), { code: "ENOENT" }))).toBeNull();
    expect(csvErrorCode(new Error("plain"))).toBeNull();
    expect(csvErrorCode(null)).toBeNull();
    expect(csvErrorCode("CSV_QUOTE_NOT_CLOSED")).toBeNull();
  });
});

describe("likeliestDelimiter", () => {
  it.each<[string, string[], string, string]>([
    ["number;country;name", [",", ";", "\t"], ",", ";"],
    ["number\tcountry", [",", ";", "\t"], ",", "\t"],
    ["a,b;c", [",", ";", "\t"], ",", ","], // a tie: the earlier candidate
    ["a,b;c", ["\t", ";", ","], ",", ";"],
    ["+12025550100", [",", ";", "\t"], ",", ","], // none: the fallback
    ["+12025550100", ["\t", ";", ","], ",", ","],
    ["a,b,c;d;e;f", [",", ";"], ",", ";"],
    ["", [",", ";"], ";", ";"],
    ["a,b", ["", ","], ";", ","], // an empty candidate never counts
  ])("%j with %j (fallback %j) → %j", (line, candidates, fallback, expected) => {
    expect(likeliestDelimiter(line, candidates, fallback)).toBe(expected);
  });
});
