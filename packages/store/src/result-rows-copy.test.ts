import { idMonth } from "@svc/domain";
import type { StoredRow } from "./lookups";
import { renderRowsChunk } from "./result-rows-copy";

/** COPY text as the format defines it, field by field: what Postgres reads back as the row. */
function reference(jobId: string, rows: readonly StoredRow[]): string {
  const field = (v: string | number | null) =>
    v === null ? "\\N" : String(v).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
  return rows
    .map((r) =>
      [jobId, idMonth(jobId), r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, JSON.stringify(r.checks), r.checks.filter((c) => c.status === "pending").length]
        .map(field)
        .join("\t"),
    )
    .map((line) => `${line}\n`)
    .join("");
}

const check = (attributes: Record<string, unknown> | null, status: StoredRow["checks"][number]["status"] = "ok"): StoredRow["checks"][number] => ({
  service: "carrier",
  status,
  registered: null,
  attributes,
  cached: false,
  billed: false,
  checked_at: status === "ok" ? "2026-11-20T10:00:00.000Z" : null,
});

describe("renderRowsChunk", () => {
  it("escapes every field as COPY text, the checks' JSON included", () => {
    const rows: StoredRow[] = [
      { row_no: 1, kind: "number", input_masked: "+121****0123", e164: "+12125550123", country: "US", number_status: "valid", email: null, email_status: null, checks: [check({ carrier: "A\\B\ttab", note: "line\nbreak\r", emoji: "😀 ü" })] },
      { row_no: 2, kind: "number", input_masked: "+49\t30\\**", e164: null, country: null, number_status: "invalid", email: null, email_status: null, checks: [check(null, "invalid"), check(null, "pending")] },
      { row_no: 3, kind: "email", input_masked: "a***@example.com", e164: null, country: null, number_status: null, email: "a\\b@example.com", email_status: "valid", checks: [check({ plain: true })] },
    ];
    const text = renderRowsChunk("job_1", rows);
    expect(Buffer.from(text).toString("utf8")).toBe(reference("job_1", rows));
    // A buffer of its own: transferable between threads.
    expect(text.byteOffset).toBe(0);
    expect(text.buffer.byteLength).toBe(text.byteLength);
  });
});
