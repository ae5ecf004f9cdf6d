import pg from "pg";
import { allocationAnswer, OfflineCarrierSource } from "./carrier-offline";
import { SourceError } from "./types";

describe("carrier from allocation data: what is conclusive", () => {
  it("is ok (billed) with a carrier name, or with a known line type and no name", () => {
    expect(allocationAnswer("mobile", "Telekom Deutschland GmbH", "DE")).toEqual({
      status: "ok",
      registered: null,
      attributes: { line_type: "mobile", carrier: "Telekom Deutschland GmbH", country: "DE", carrier_source: "allocation" },
    });
    expect(allocationAnswer("fixed_line_or_mobile", null, "US")).toEqual({
      status: "ok",
      registered: null,
      attributes: { line_type: "fixed_line_or_mobile", carrier: null, country: "US", carrier_source: null },
    });
    expect(allocationAnswer("unknown", "Some Carrier", "US").status).toBe("ok");
  });

  it("is unknown (free) when neither the line type nor the carrier is known", () => {
    expect(allocationAnswer("unknown", null, "US")).toEqual({ status: "unknown", registered: null, attributes: null });
  });

  it("fails as unavailable when the block store cannot be read, rather than answering without the carrier", async () => {
    // A real Postgres that refuses the connection (no such database): the runner then answers unknown, free.
    const pool = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:5432/no_such_database_for_carrier_test", max: 1, connectionTimeoutMillis: 2_000 });
    try {
      const source = new OfflineCarrierSource(pool);
      const id = { e164: "+13125551234", email: null, domain: null, country: "US", numberType: undefined };
      await expect(source.lookup(id, AbortSignal.timeout(5_000))).rejects.toEqual(expect.objectContaining({ kind: "unavailable" }));
      await expect(source.lookup(id, AbortSignal.timeout(5_000))).rejects.toBeInstanceOf(SourceError);
    } finally {
      await pool.end();
    }
  });
});
