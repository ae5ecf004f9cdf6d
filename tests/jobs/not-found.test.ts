import { newId } from "@svc/domain";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { TEST, jobsApi, type JobsApi, type Query, type Res } from "./helpers";

/**
 * `not_found` does not say which of its causes applies (the spec): a job whose
 * results were purged answers its results and downloads exactly as a job that never
 * existed, whatever the query.
 */
let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

/** The response as a client sees it, without what differs per request (its id). */
function comparable(res: Res): { status: number; contentType: string | undefined; body: unknown } {
  const body = structuredClone(res.body) as { error?: Record<string, unknown> };
  if (body.error) delete body.error.request_id;
  return { status: res.status, contentType: res.headers["content-type"], body };
}

describe("a purged job's results and a job that never existed", () => {
  it("answer identical 404 bodies (apart from the request id), for results and downloads, whatever the query", async () => {
    const k = await api.newKey();
    const created = await api.create(k.key, { numbers: [TEST.clean, TEST.scam], checks: ["spam", "whatsapp"] });
    expect(created.status).toBe(201);
    const purged = created.body.id as string;
    const page = await api.results(k.key, purged, { limit: 1 });
    const cursor = page.body.next_cursor as string;
    expect((await api.remove(k.key, purged)).body.purged_at).toEqual(expect.any(String));
    const never = newId("job");

    const queries: Array<["results" | "download", Query]> = [
      ["results", {}],
      ["results", { limit: 1, after: cursor }],
      ["results", { after: "not-a-cursor" }],
      ["results", { service: "spam", registered: "true" }],
      ["results", { service: "email" }],
      ["download", { format: "csv" }],
      ["download", { format: "ndjson" }],
    ];
    for (const [what, query] of queries) {
      const a = await api[what](k.key, purged, query);
      const b = await api[what](k.key, never, query);
      expect({ what, query, ...comparable(a) }).toEqual({ what, query, ...comparable(b) });
      expect(a.status).toBe(404);
      expect(a.body.error).toMatchObject({ code: "not_found", message: "No such job." });
      expect(JSON.stringify(a.body)).not.toMatch(/delet|purg/i);
    }
  });
});
