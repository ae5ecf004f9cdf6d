import { purgeExpired } from "@svc/store";
import { createHash } from "node:crypto";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ config: { TRUSTED_PROXIES: "127.0.0.1/32" } });
});
afterAll(async () => gw.close());

let networkNo = 0;
/** A fresh client network per call, so the per-network limit stays out of the way unless tested. */
const freshNetwork = () => `198.18.${Math.floor(++networkNo / 250)}.${networkNo % 250}`;

async function token(from = freshNetwork()): Promise<string> {
  const res = await gw.http().get("/v1/test-keys/challenge").set("X-Forwarded-For", from);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ algorithm: "sha256", difficulty: 4 });
  return `${res.body.challenge}:${solveChallenge(res.body.challenge, res.body.difficulty)}`;
}

const form = (email: string, challenge_token: string) => ({ email, name: "Ada Lovelace", company: "Analytical Engines", use_case: "Checking sign-up numbers", challenge_token });
const ask = (body: object, from = freshNetwork()) => gw.http().post("/v1/test-keys").set("X-Forwarded-For", from).send(body);

describe("POST /v1/test-keys", () => {
  it("issues a working personal test key, shown once, to a solved challenge", async () => {
    const res = await ask(form("ada@engines.example", await token()));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: "test_key", mode: "test", live_access: { status: "requested" } });
    expect(res.body.key).toMatch(/^svc_test_[0-9A-Za-z]{36}$/);
    expect(res.body.scopes).toContain("webhooks:manage");
    const lookup = await gw.http().post("/v1/lookup").set(bearer(res.body.key)).send({ numbers: ["+12125551234"], checks: ["spam"] });
    expect(lookup.status).toBe(200);
    const { rows } = await gw.store.pool.query(`SELECT email, name, company, outcome FROM test_key_requests WHERE email = 'ada@engines.example'`);
    expect(rows).toEqual([{ email: "ada@engines.example", name: "Ada Lovelace", company: "Analytical Engines", outcome: "issued" }]);
    const stored = await gw.store.pool.query(`SELECT count(*)::int AS n FROM api_keys WHERE hint LIKE '%' || $1`, [res.body.key.slice(-4)]);
    expect(stored.rows[0].n).toBeGreaterThanOrEqual(1);
    const plain = await gw.store.pool.query(`SELECT count(*)::int AS n FROM api_keys WHERE encode(key_hash, 'escape') LIKE '%' || $1 || '%'`, [res.body.key]);
    expect(plain.rows[0].n).toBe(0);
  });

  it("refuses a missing, wrong, expired or reused challenge token", async () => {
    const good = await token();
    const [challenge] = good.split(":");
    for (const bad of ["nope", `${challenge}:zzzz-not-base62`, `${challenge?.replace(/.$/, "x")}:1`]) {
      const res = await ask(form("bob@engines.example", bad));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", param: "challenge_token" });
    }
    expect((await ask(form("bob@engines.example", good))).status).toBe(201);
    const reused = await ask(form("bob2@engines.example", good));
    expect(reused.status).toBe(400);
    expect(reused.body.error.param).toBe("challenge_token");

    const stale = await token();
    gw.setNow(new Date(Date.now() + 11 * 60_000));
    try {
      expect((await ask(form("bob3@engines.example", stale))).status).toBe(400);
    } finally {
      gw.setNow(null);
    }
  });

  it("gives an address at most 3 keys in 30 days, all on one account, even when asked concurrently", async () => {
    const tokens = await Promise.all(Array.from({ length: 5 }, () => token()));
    const results = await Promise.all(tokens.map((t) => ask(form("Grace@Navy.example", t))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409]);
    const refused = results.find((r) => r.status === 409);
    expect(refused?.body.error).toMatchObject({ code: "test_key_exists", retryable: false, param: null });
    const { rows } = await gw.store.pool.query(
      `SELECT count(DISTINCT k.account_id)::int AS accounts FROM test_key_requests r JOIN api_keys k ON k.id = r.api_key_id WHERE r.email = 'grace@navy.example'`,
    );
    expect(rows[0].accounts).toBe(1);

    gw.setNow(new Date(Date.now() + 31 * 86_400_000));
    try {
      expect((await ask(form("grace@navy.example", await token()))).status).toBe(201);
    } finally {
      gw.setNow(null);
    }
  });

  it("counts sub-address and case variants of an address against its 3 keys; dots count only where the provider ignores them", async () => {
    for (const email of ["dup-x@example.com", "dup-x@example.com", "dup-x@example.com"]) expect((await ask(form(email, await token()))).status).toBe(201);
    for (const variant of ["dup-x+1@example.com", "DUP-X+anything@Example.COM", "dup-x+a+b@example.com"]) {
      const res = await ask(form(variant, await token()));
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: "test_key_exists" });
      expect(JSON.stringify(res.body)).not.toContain("dup-x");
    }
    // At example.com (as at most providers) a dot makes another mailbox: d.up-x is someone else.
    expect((await ask(form("d.up-x@example.com", await token()))).status).toBe(201);
    // The address as given is what is kept (the live-access review replies to it).
    const { rows } = await gw.store.pool.query(`SELECT email, outcome FROM test_key_requests WHERE email LIKE '%up-x%' ORDER BY created_at, email`);
    expect(rows.filter((r: { outcome: string }) => r.outcome === "refused_exists").map((r: { email: string }) => r.email).sort()).toEqual([
      "dup-x+1@example.com",
      "dup-x+a+b@example.com",
      "dup-x+anything@example.com",
    ]);
  });

  it("treats Gmail dot variants and googlemail.com as one mailbox, with one account for its keys", async () => {
    const issued = [];
    for (const email of ["jane.doe@gmail.com", "janedoe@googlemail.com", "J.A.N.E.D.O.E+news@gmail.com"]) {
      const res = await ask(form(email, await token()));
      expect(res.status).toBe(201);
      issued.push(res.body.key as string);
    }
    expect((await ask(form("ja.nedoe+x@googlemail.com", await token()))).status).toBe(409);
    const { rows } = await gw.store.pool.query(
      `SELECT count(DISTINCT k.account_id)::int AS accounts, count(*)::int AS keys FROM test_key_requests r JOIN api_keys k ON k.id = r.api_key_id WHERE r.cap_address = 'janedoe@gmail.com'`,
    );
    expect(rows[0]).toEqual({ accounts: 1, keys: 3 });
    // Proton's separators are transparent on every Proton domain.
    for (const email of ["jo.hn_doe@proton.me", "john-doe@protonmail.com", "johndoe+x@pm.me"]) expect((await ask(form(email, await token()))).status).toBe(201);
    expect((await ask(form("j.o.h.n.d.o.e@protonmail.ch", await token()))).status).toBe(409);
    // Elsewhere dots, hyphens and underscores are part of the name.
    expect((await ask(form("jane.doe@outlook.example", await token()))).status).toBe(201);
    expect((await ask(form("janedoe@outlook.example", await token()))).status).toBe(201);
  });

  it("counts rows written before the rule (or by a gateway that predates it) by their mailbox too", async () => {
    // Inserted as an older gateway did: no cap_address given; Postgres derives it.
    for (let i = 0; i < 3; i += 1) {
      await gw.store.pool.query(
        `INSERT INTO test_key_requests (id, email, name, company, use_case, network, outcome, created_at)
         VALUES ($1, $2, 'N', 'C', 'U', '203.0.113.9', 'issued', now() - interval '1 day')`,
        [`tkr_legacyrow00${i}`, `legacy+old${i}@corp.example`],
      );
    }
    expect((await ask(form("Legacy@corp.example", await token()))).status).toBe(409);
  });

  it("derives the counted mailbox in one place, the database", async () => {
    const cases: Array<[string, string]> = [
      ["Dup-X@Example.com", "dup-x@example.com"],
      ["dup-x+1@example.com", "dup-x@example.com"],
      ["dup-x+1+2@example.com", "dup-x@example.com"],
      ["d.up-x@example.com", "d.up-x@example.com"],
      ["+only@example.com", "+only@example.com"],
      ["J.Doe+tag@GoogleMail.com", "jdoe@gmail.com"],
      ["j.doe@gmail.com", "jdoe@gmail.com"],
      ["j_d-oe.x@gmail.com", "j_d-oex@gmail.com"],
      ["j.d_o-e+x@pm.me", "jdoe@proton.me"],
      ["j.doe@protonmail.ch", "jdoe@proton.me"],
      ["j.doe@mail.gmail.com.example", "j.doe@mail.gmail.com.example"],
    ];
    for (const [given, counted] of cases) {
      const { rows } = await gw.store.pool.query(`SELECT svc_test_key_cap_address($1) AS counted`, [given]);
      expect([given, rows[0].counted]).toEqual([given, counted]);
    }
  });

  it("allows 3 requests per network per UTC day whatever the result, IPv6 counted per /64", async () => {
    const net = "203.0.113.50";
    const outcomes = [
      await gw.http().post("/v1/test-keys").set("X-Forwarded-For", net).set("Content-Type", "application/json").send("{broken"),
      await ask(form("x@y.example", "bad-token"), net),
      await ask(form("lin@y.example", await token()), net),
      await ask(form("lin2@y.example", await token()), net),
    ].map((r) => r.status);
    expect(outcomes).toEqual([400, 400, 201, 429]);
    const limited = await ask(form("lin3@y.example", await token()), net);
    expect(limited.body.error).toMatchObject({ code: "rate_limited", retryable: true });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(86_400);

    const v6 = ["2001:db8:aa:1::1", "2001:db8:aa:1:ffff::2", "2001:db8:aa:1::3"];
    for (const from of v6) expect((await ask(form("v6@y.example", "bad"), from)).status).toBe(400);
    expect((await ask(form("v6@y.example", "bad"), "2001:db8:aa:1::99")).status).toBe(429);
    expect((await ask(form("v6@y.example", "bad"), "2001:db8:aa:2::1")).status).toBe(400);
  });

  it("serves the page where a person gets a key", async () => {
    const page = await gw.http().get("/get-test-key");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.text).toContain('<script src="/get-test-key.js">');
    const script = await gw.http().get("/get-test-key.js");
    expect(script.status).toBe(200);
    expect(script.text).toContain("/v1/test-keys/challenge");
    expect(page.text).toContain('<script src="/get-test-key/pow-solver.js">');
  });

  it("the page's own solver hashes like SHA-256 and its solution gets a key", async () => {
    const served = await gw.http().get("/get-test-key/pow-solver.js");
    expect(served.status).toBe(200);
    // Load exactly the script the browser gets, in CommonJS form.
    const module = { exports: {} as { sha256FirstWord(s: string): number; solve(c: string, d: number): string } };
    new Function("module", served.text)(module);
    const { sha256FirstWord, solve } = module.exports;
    for (const sample of ["", "abc", "x".repeat(55), "y".repeat(56), "z".repeat(64), "challenge.sig:1z"]) {
      expect(sha256FirstWord(sample)).toBe(createHash("sha256").update(sample).digest().readUInt32BE(0));
    }
    const challenge = (await gw.http().get("/v1/test-keys/challenge").set("X-Forwarded-For", freshNetwork())).body;
    const nonce = solve(challenge.challenge, challenge.difficulty);
    expect((await ask(form("page@engines.example", `${challenge.challenge}:${nonce}`))).status).toBe(201);
  });
});

describe("retention of test-key requests", () => {
  it("deletes refused requests once the 30 days their rule looks back have passed; issued ones stay", async () => {
    const insert = (id: string, outcome: string, age: string) =>
      gw.store.pool.query(
        `INSERT INTO test_key_requests (id, email, name, company, use_case, network, outcome, created_at)
         VALUES ($1, 'someone@corp.example', 'N', 'C', 'U', '203.0.113.9', $2, now() - $3::interval)`,
        [id, outcome, age],
      );
    await insert("tkr_oldrefused01", "refused_exists", "31 days");
    await insert("tkr_oldissued001", "issued", "31 days");
    await insert("tkr_newrefused01", "refused_exists", "29 days");
    await purgeExpired(gw.store.pool, new Date());
    const { rows } = await gw.store.pool.query(`SELECT id FROM test_key_requests WHERE id IN ('tkr_oldrefused01', 'tkr_oldissued001', 'tkr_newrefused01') ORDER BY id`);
    expect(rows.map((r: { id: string }) => r.id)).toEqual(["tkr_newrefused01", "tkr_oldissued001"]);
  });
});
