import { purgeExpired } from "@svc/store";
import { bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { TEST, jobsApi, type JobsApi } from "./helpers";

/**
 * result_rows.job_id has no foreign key (a job's rows are one COPY, and the per-row
 * check was a quarter of it: migration 20261126100000_result_rows_job_fill). What the
 * key did must still hold: a job's rows go with the job, whoever deletes it, and
 * nobody else's go with them; a row number is stored once per job and per lookup.
 * Since 20261127100000_partition_by_month the same holds for lookup_id (its key went
 * too: a key to a partitioned table must name the partition), and each partition's own
 * unique indexes keep row numbers unique (a parent's rows are all in its partition).
 */
let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

const body = { numbers: [TEST.clean, TEST.scam, TEST.invalid], emails: [TEST.deliverable], checks: ["spam", "whatsapp", "email"] };

async function newJob(key: string): Promise<string> {
  const res = await api.create(key, body);
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function newLookup(key: string): Promise<string> {
  const res = await gw.http().post("/v1/lookup").set(bearer(key)).send({ numbers: [TEST.clean, TEST.scam], checks: ["spam"] });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const jobRows = async (id: string) => (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM result_rows WHERE job_id = $1`, [id])).rows[0]?.n;
const lookupRows = async (id: string) => (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM result_rows WHERE lookup_id = $1`, [id])).rows[0]?.n;

describe("a job's result rows", () => {
  it("are deleted with the job when retention deletes it, and nobody else's are", async () => {
    const mine = await api.newKey();
    const other = await api.newKey();
    const expired = await newJob(mine.key);
    const kept = await newJob(mine.key);
    const othersJob = await newJob(other.key);
    const othersLookup = await newLookup(other.key);
    expect([await jobRows(expired), await jobRows(kept), await jobRows(othersJob), await lookupRows(othersLookup)]).toEqual([4, 4, 4, 2]);

    const now = new Date();
    // The month also holds a job kept a year (an account with a long retention), so it will not be dropped
    // soon and the expired job is deleted row by row (PARTITION_LINGER_MS).
    await gw.store.pool.query(`UPDATE jobs SET expires_at = $2 WHERE id = $1`, [kept, new Date(now.getTime() + 400 * 86_400_000)]);
    await gw.store.pool.query(`UPDATE jobs SET expires_at = $2 WHERE id = $1`, [expired, new Date(now.getTime() - 1_000)]);
    const purged = await purgeExpired(gw.store.pool, now);
    expect(purged.jobs).toBe(1);

    expect(await jobRows(expired)).toBe(0);
    expect((await api.get(mine.key, expired)).status).toBe(404);
    expect([await jobRows(kept), await jobRows(othersJob), await lookupRows(othersLookup)]).toEqual([4, 4, 2]);
    expect((await api.results(mine.key, kept)).body.data).toHaveLength(4);
    expect((await api.results(other.key, othersJob)).body.data).toHaveLength(4);
  });

  it("are deleted with the job when its account is deleted (the jobs go by cascade)", async () => {
    const leaving = await api.newKey();
    const staying = await api.newKey();
    const gone = [await newJob(leaving.key), await newJob(leaving.key)];
    const stays = await newJob(staying.key);

    await gw.store.pool.query(`DELETE FROM accounts WHERE id = $1`, [leaving.accountId]);

    expect(await Promise.all(gone.map(jobRows))).toEqual([0, 0]);
    expect(await jobRows(stays)).toBe(4);
  });

  it("are deleted by DELETE /v1/jobs/{id} while the job stays readable", async () => {
    const k = await api.newKey();
    const id = await newJob(k.key);
    const other = await newJob(k.key);
    expect((await api.remove(k.key, id)).status).toBe(200);
    expect(await jobRows(id)).toBe(0);
    expect((await api.get(k.key, id)).status).toBe(200);
    expect(await jobRows(other)).toBe(4);
  });

  it("hold each row number once per job and once per lookup", async () => {
    const k = await api.newKey();
    const job = await newJob(k.key);
    const lookup = await newLookup(k.key);
    const copyRow = (parent: "job_id" | "lookup_id", id: string, rowNo: number) =>
      gw.store.pool.query(
        `INSERT INTO result_rows (${parent}, id_month, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
         SELECT ${parent}, id_month, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks
         FROM result_rows WHERE ${parent} = $1 AND row_no = $2`,
        [id, rowNo],
      );
    await expect(copyRow("job_id", job, 1)).rejects.toMatchObject({ code: "23505", constraint: expect.stringMatching(/^result_rows_p\d{4}_\d{2}_job_id_row_no_key$/) });
    await expect(copyRow("lookup_id", lookup, 2)).rejects.toMatchObject({ code: "23505", constraint: expect.stringMatching(/^result_rows_p\d{4}_\d{2}_lookup_id_row_no_key$/) });
    // The same row number under another parent of either kind is another row.
    const job2 = await newJob(k.key);
    expect(await jobRows(job2)).toBe(4);
    expect(await jobRows(job)).toBe(4);
    expect(await lookupRows(lookup)).toBe(2);
  });

  it("always name one parent", async () => {
    const row = `'number', '+1202******00', '[]'::jsonb`;
    await expect(gw.store.pool.query(`INSERT INTO result_rows (id_month, row_no, kind, input_masked, checks) VALUES (DATE '1970-01-01', 1, ${row})`)).rejects.toMatchObject({
      code: "23514",
      constraint: "result_rows_one_parent",
    });
  });
});

describe("a lookup's result rows", () => {
  it("are deleted with the lookup when retention or its account's deletion deletes it, and nobody else's are", async () => {
    const mine = await api.newKey();
    const leaving = await api.newKey();
    const expired = await newLookup(mine.key);
    const kept = await newLookup(mine.key);
    const job = await newJob(mine.key);
    const gone = await newLookup(leaving.key);
    const now = new Date();
    // Kept a year (an account with a long retention): the month will not be dropped soon, so the expired lookup goes row by row.
    await gw.store.pool.query(`UPDATE lookups SET expires_at = $2 WHERE id = $1`, [kept, new Date(now.getTime() + 400 * 86_400_000)]);
    await gw.store.pool.query(`UPDATE lookups SET expires_at = $2 WHERE id = $1`, [expired, new Date(now.getTime() - 1_000)]);
    expect((await purgeExpired(gw.store.pool, now)).lookups).toBe(1);
    await gw.store.pool.query(`DELETE FROM accounts WHERE id = $1`, [leaving.accountId]);

    expect([await lookupRows(expired), await lookupRows(gone)]).toEqual([0, 0]);
    expect([await lookupRows(kept), await jobRows(job)]).toEqual([2, 4]);
    expect((await gw.http().get(`/v1/lookups/${kept}`).set(bearer(mine.key))).body.results).toHaveLength(2);
  });
});
