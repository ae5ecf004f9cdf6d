import { accountWithKey, bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, startLiveWorkers, type LiveWorkers } from "../support/live";
import { routesKey } from "@svc/sources";

/**
 * The check-worker takes a live lookup's country from the row the gateway stored
 * instead of parsing the number again, and parses only for the line type the spam
 * score reads: the answers are the ones a parse gives — coverage by country, the
 * VoIP range, and checks without coverage answered for any country.
 */
describe("a live lookup's checks read the number's stored facts", () => {
  let gw: TestGateway;
  let live: LiveWorkers;

  beforeAll(async () => {
    gw = await startTestGateway();
    live = await startLiveWorkers(gw.env);
    await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
  });
  afterAll(async () => {
    await live?.stop();
    await gw?.close();
  });

  it("answers spam by country and VoIP range, and WhatsApp for any country", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    // A US VoIP range, a US number outside it, a Guernsey mobile (outside the spam check's countries).
    const numbers = ["+13052091234", "+14155550163", "+447911123456"];
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers, checks: ["spam", "whatsapp"], wait: 10 });
    expect(res.status).toBe(200);
    const [voip, plain, abroad] = res.body.results as Array<{ country: string; checks: Array<{ service: string; status: string; attributes: Record<string, unknown> | null }> }>;
    expect(voip?.checks[0]).toMatchObject({ service: "number.spam", status: "ok", attributes: expect.objectContaining({ voip_range: true }) });
    expect(plain?.checks[0]).toMatchObject({ service: "number.spam", status: "ok", attributes: expect.objectContaining({ voip_range: false }) });
    expect(abroad?.country).toBe("GG");
    expect(abroad?.checks[0]).toMatchObject({ service: "number.spam", status: "unsupported_country" });
    expect(abroad?.checks[1]).toMatchObject({ service: "whatsapp", status: expect.stringMatching(/^(ok|unknown)$/) });
  });
});
