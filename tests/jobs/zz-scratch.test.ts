import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { accountWithKey, bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => gw.close());

it("explores", async () => {
  const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
  const est = await gw.http().post("/v1/jobs/estimate").set(bearer(k.key)).send({ numbers: ["+12025550100", "+12025550100", "bad"], emails: ["a@b.example"], checks: ["spam", "email"] });
  console.log(JSON.stringify(est.body, null, 1));
  const job = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: ["+12025550108", "+12025550107", "=1+2"], emails: ["outage@example.com", "=cmd@x.example"], checks: ["spam", "whatsapp", "email"] });
  console.log(job.status, JSON.stringify(job.body, null, 1), job.headers.location);
  const res = await gw.http().get(`/v1/jobs/${job.body.id}/results`).set(bearer(k.key));
  console.log(JSON.stringify(res.body, null, 1));
  const dl = await gw.http().get(`/v1/jobs/${job.body.id}/download?format=csv`).set(bearer(k.key));
  console.log(dl.status, dl.headers, dl.text);
  const up = await gw.http().post("/v1/jobs").set(bearer(k.key)).attach("file", Buffer.from("phone,email\n+12025550100,deliverable@example.com\n"), "list.csv").field("checks", "spam,email");
  console.log(up.status, JSON.stringify(up.body));
  const big = await gw.http().post("/v1/jobs").set(bearer(k.key)).attach("file", Buffer.alloc(4 * 1024 * 1024 + 10, "a"), "list.csv").field("checks", "spam").catch((e) => e);
  console.log("big", big.status, big.body, String(big));
});
