import { spawnSync } from "node:child_process";
import path from "node:path";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * The live-access review /get-test-key promises: every issued test key asks for live
 * access, and `npm run admin -- live-access …` lists and answers those requests,
 * against the gateway that took them and its database.
 */
const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ config: { TRUSTED_PROXIES: "127.0.0.1/32" } });
});
afterAll(async () => gw.close());

function admin(...args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, json: () => JSON.parse(res.stdout) as Record<string, any> };
}

let network = 0;
/** A personal test key from POST /v1/test-keys, as /get-test-key asks for one. */
async function requestTestKey(email: string, company: string): Promise<string> {
  const from = `198.19.0.${++network}`;
  const challenge = (await gw.http().get("/v1/test-keys/challenge").set("X-Forwarded-For", from)).body;
  const res = await gw
    .http()
    .post("/v1/test-keys")
    .set("X-Forwarded-For", from)
    .send({ email, name: "Grace Hopper", company, use_case: "Checking sign-up numbers", challenge_token: `${challenge.challenge}:${solveChallenge(challenge.challenge, challenge.difficulty)}` });
  expect(res.status).toBe(201);
  expect(res.body.live_access).toMatchObject({ status: "requested" });
  return res.body.key as string;
}

describe("npm run admin -- live-access", () => {
  it("lists the requests the page made, answers one with a live key, and records the answer for every request of that mailbox", async () => {
    const testKey = await requestTestKey("grace+one@navy.example", "Navy");
    await requestTestKey("grace+two@navy.example", "Navy"); // the same mailbox: the same account
    await requestTestKey("alan@bletchley.example", "Bletchley");

    const pending = admin("live-access", "list");
    expect(pending.status).toBe(0);
    const listed = pending.json();
    expect(listed).toMatchObject({ object: "list", status: "pending", has_more: false });
    expect(listed.data.map((r: { email: string }) => r.email)).toEqual(["g***@navy.example", "g***@navy.example", "a***@bletchley.example"]);
    expect(listed.data[0]).toMatchObject({ object: "live_access_request", id: expect.stringMatching(/^tkr_/), name: "Grace Hopper", company: "Navy", status: "pending", decided_at: null });
    // Addresses only with --reveal.
    expect(pending.stdout).not.toContain("grace+one@");
    expect(admin("live-access", "list", "--reveal").json().data.map((r: { email: string }) => r.email)).toEqual(["grace+one@navy.example", "grace+two@navy.example", "alan@bletchley.example"]);

    const [grace1, grace2, alan] = listed.data as Array<{ id: string; account_id: string }>;
    const approved = admin("live-access", "approve", "--id", grace1!.id, "--note", "known customer");
    expect(approved.stderr).toBe("");
    expect(approved.status).toBe(0);
    const decision = approved.json();
    expect(decision).toMatchObject({
      object: "live_access_decision",
      decision: "approved",
      request_ids: [grace1!.id, grace2!.id].sort(),
      email: "g***@navy.example",
      account_id: grace1!.account_id,
      balance: { amount: "0.00" },
      key: { object: "api_key", mode: "live", key: expect.stringMatching(/^svc_live_/) },
    });
    expect(decision.next_steps.join(" ")).toContain(`balance topup --account ${grace1!.account_id}`);

    // The live key belongs to the test key's account and works; with no balance a billed lookup is refused, nothing else.
    const live = decision.key.key as string;
    const account = await gw.http().get("/v1/account").set(bearer(live));
    expect(account.status).toBe(200);
    expect(account.body.id).toBe(grace1!.account_id);
    expect((await gw.http().get("/v1/account").set(bearer(testKey))).body.id).toBe(grace1!.account_id);
    const lookup = await gw.http().post("/v1/lookup").set(bearer(live)).send({ numbers: ["+14155552671"], checks: ["carrier"] });
    expect(lookup.status).toBe(402);
    expect(lookup.body.error.code).toBe("insufficient_balance");

    // Answered once: again is refused, and the queue holds only Alan's.
    const again = admin("live-access", "approve", "--id", grace2!.id);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain("already approved");
    expect(admin("live-access", "list").json().data.map((r: { id: string }) => r.id)).toEqual([alan!.id]);

    const declined = admin("live-access", "decline", "--id", alan!.id, "--reason", "use case not supported");
    expect(declined.status).toBe(0);
    expect(declined.json()).toMatchObject({ decision: "declined", request_ids: [alan!.id], note: "use case not supported", email: "a***@bletchley.example" });
    expect(admin("live-access", "list").json().data).toEqual([]);
    const all = admin("live-access", "list", "--status", "all").json().data as Array<Record<string, unknown>>;
    expect(all.map((r) => [r.id, r.status, r.note])).toEqual([
      [grace1!.id, "approved", "known customer"],
      [grace2!.id, "approved", "known customer"],
      [alan!.id, "declined", "use case not supported"],
    ]);
    expect(all[0]!.live_key_id).toBe(decision.key.id);
    expect(all[2]!.live_key_id).toBeNull();
    // The declined requester's test key keeps working.
    const { rows } = await gw.store.pool.query(`SELECT live_access_decision, live_access_decided_at IS NOT NULL AS decided FROM test_key_requests WHERE id = $1`, [alan!.id]);
    expect(rows).toEqual([{ live_access_decision: "declined", decided: true }]);
  }, 60_000);

  it.each([
    [["live-access", "approve"], "--id is required"],
    [["live-access", "approve", "--id", "tkr_missing"], 'no live-access request with id "tkr_missing"'],
    [["live-access", "decline", "--id", "tkr_missing"], "--reason is required"],
    [["live-access", "list", "--status", "maybe"], "--status must be"],
    [["live-access", "list", "--limit", "0"], "--limit must be"],
  ])("refuses %j", (args, message) => {
    const res = admin(...(args as string[]));
    expect(res.status).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
  });
});
