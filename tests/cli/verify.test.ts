import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SCOPES } from "@svc/domain";
import { Webhook } from "standardwebhooks";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { createTestCertificates, LOOPBACK, WebhookReceiver } from "../support/webhooks";
import type { ReceivedRequest } from "../../packages/webhooks/src/testing/receiver";
import { expectNoKey, parsed, svc, type Run } from "./run";

/**
 * `svc webhooks verify`: a delivery made by a real webhook-dispatcher process to an
 * HTTPS receiver, saved as the request file the CLI documents, verifies; deliveries
 * signed by an independent implementation (the standardwebhooks package) are valid,
 * tampered, signed with another secret, stale, or saved with an extra final newline,
 * and the CLI says which, with exit 0 or 1. The secret is never printed.
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let gw: TestGateway;
let dispatcher: RunningService;
let k: TestKey;
const dir = mkdtempSync(path.join(tmpdir(), "svc-cli-verify-"));
const file = (name: string, content: string | Buffer) => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};

beforeAll(async () => {
  await receiver.start();
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK } });
  dispatcher = await startService("webhook-dispatcher", gw.env, { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, WEBHOOK_EXTRA_CA_FILE: certs.caFile, WEBHOOK_TIMEOUT_MS: "1500", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_MS: "500" });
  k = await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: [...DEFAULT_SCOPES, "webhooks:manage"] });
}, 60_000);
afterAll(async () => {
  await dispatcher?.stop();
  await receiver.close();
  await gw?.close();
});

/** The request as received, in the request-file format `webhooks verify` reads. */
function requestFile(req: { path: string; headers: Record<string, string | string[] | undefined>; body: string }, crlf = true): string {
  const nl = crlf ? "\r\n" : "\n";
  const headers = Object.entries(req.headers).map(([name, v]) => `${name}: ${Array.isArray(v) ? v.join(", ") : v}`);
  return [`POST ${req.path} HTTP/1.1`, ...headers, "", req.body].join(nl);
}

const verify = (args: string[], opts: { secret?: string; input?: string } = {}) =>
  svc(["webhooks", "verify", ...args], { env: opts.secret ? { SVC_WEBHOOK_SECRET: opts.secret } : {}, input: opts.input });
const secretPart = (s: string) => s.replace(/^whsec_/, "");
const noSecret = (secret: string, r: Run) => {
  expect(r.stdout + r.stderr).not.toContain(secretPart(secret));
};

describe("a real delivery of the webhook-dispatcher", () => {
  it("created and tested through svc, saved as a request file, verifies (exit 0); the same with the body changed does not (exit 1)", async () => {
    const created = await svc(["--json", "webhooks", "create", "--url", receiver.url("/cli-hooks"), "--events", "job.completed"], { key: k.key, baseUrl: gw.url });
    expect(created.code).toBe(0);
    const endpoint = parsed<{ id: string; secret: string }>(created);
    const tested = await svc(["webhooks", "test", endpoint.id], { key: k.key, baseUrl: gw.url });
    expect(tested.code).toBe(0);
    const delivery: ReceivedRequest = await receiver.waitFor((r) => r.path === "/cli-hooks" && JSON.parse(r.body).type === "webhook.test", 1, 20_000);
    expect(delivery.headers["content-length"]).toBeDefined();

    const saved = file("delivery.http", `${requestFile(delivery)}\n`); // an editor's final newline after the body: Content-Length says where it ends
    const ok = await verify([saved], { secret: endpoint.secret });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^valid: webhook\.test evt_\w+, signed \d+ s ago$/m);
    const asJson = parsed<{ valid: boolean; event: { type: string; data: { id: string } } }>(await verify([saved, "--json"], { secret: endpoint.secret }));
    expect(asJson).toMatchObject({ valid: true, event: { type: "webhook.test", data: { id: endpoint.id } } });

    const tampered = file("tampered.http", requestFile({ ...delivery, body: delivery.body.replace("webhook.test", "webhook.tesT") }));
    const bad = await verify([tampered], { secret: endpoint.secret });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^not valid: no_valid_signature: /m);
    noSecret(endpoint.secret, ok);
    noSecret(endpoint.secret, bad);
    expectNoKey(k.key, created.stdout, created.stderr, tested.stdout, tested.stderr);
  }, 40_000);
});

describe("deliveries signed by an independent implementation", () => {
  const secret = `whsec_${Buffer.from("a signing secret of 32 bytes....").toString("base64")}`;
  const other = `whsec_${Buffer.from("another secret, also of 32 bytes").toString("base64")}`;
  const body = JSON.stringify({ type: "job.completed", id: "evt_cli1", created_at: new Date().toISOString(), livemode: false, data: { object: "job", id: "job_x", status: "completed", progress: { total: 1, checks_total: 1, done: 1, conclusive: 1, non_billable: 0 }, results_url: "https://api.example/v1/jobs/job_x/results" } });
  const signed = (at: Date, payload = body) => {
    const headers = { "webhook-id": "evt_cli1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)) };
    return { ...headers, "webhook-signature": new Webhook(secret).sign("evt_cli1", at, payload), "content-type": "application/json" };
  };

  it("valid from a request file (LF), from stdin, and from --headers (JSON or lines) with --body; the secret from a file, the env or --secret", async () => {
    const req = { path: "/hooks", headers: signed(new Date()), body };
    const lf = file("lf.http", requestFile(req, false));
    expect((await verify([lf], { secret })).code).toBe(0);
    const fromStdin = await verify([], { secret, input: requestFile(req) });
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toMatch(/^valid: job\.completed evt_cli1/m);

    const headersJson = file("headers.json", JSON.stringify(req.headers));
    const headerLines = file("headers.txt", Object.entries(req.headers).map(([n, v]) => `${n}: ${v}`).join("\n"));
    const rawBody = file("body.bin", body);
    const secretFile = file("secret.txt", `${secret}\n`);
    for (const h of [headersJson, headerLines]) {
      const r = await verify(["--headers", h, "--body", rawBody, "--secret-file", secretFile]);
      expect({ h, code: r.code, out: r.stdout }).toMatchObject({ code: 0, out: expect.stringMatching(/^valid: /) });
    }
    const viaArg = await verify([lf, "--secret", secret]);
    expect(viaArg.code).toBe(0);
    noSecret(secret, viaArg);
  });

  it("not valid (exit 1), saying why: another secret, a changed body, missing headers, an extra final newline", async () => {
    const req = { path: "/hooks", headers: signed(new Date()), body };
    const saved = file("valid.http", requestFile(req));
    const wrong = await verify([saved, "--json"], { secret: other });
    expect(wrong.code).toBe(1);
    expect(parsed(wrong)).toMatchObject({ valid: false, reason: "no_valid_signature", signature_matches: false, webhook_id: "evt_cli1" });
    noSecret(other, wrong);

    const changed = await verify([file("changed.http", requestFile({ ...req, body: body.replace("job_x", "job_y") }))], { secret });
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^not valid: no_valid_signature: No v1 signature matches/m);

    const { "webhook-signature": _dropped, ...unsigned } = req.headers;
    const missing = await verify([file("unsigned.http", requestFile({ ...req, headers: unsigned }))], { secret });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/^not valid: missing_header: /m);

    // Saved without Content-Length by something that adds a final newline: the bytes differ, and the CLI says how.
    const newline = await verify([file("newline.http", `${requestFile(req)}\n`)], { secret });
    expect(newline.code).toBe(1);
    expect(newline.stdout).toMatch(/would match without the body's final line break/);
  });

  it("expired: a delivery older than 5 minutes is not valid (timestamp_too_old), though its signature matches; --tolerance accepts it", async () => {
    const old = file("old.http", requestFile({ path: "/hooks", headers: signed(new Date(Date.now() - 10 * 60_000)), body }));
    const stale = await verify([old], { secret });
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/^not valid: timestamp_too_old: .*sent 6\d\d s ago, tolerance 300 s\)\. The signature itself matches this secret/m);
    expect(parsed(await verify([old, "--json"], { secret }))).toMatchObject({ valid: false, reason: "timestamp_too_old", signature_matches: true });
    const forged = await verify([old, "--json"], { secret: other });
    expect(parsed(forged)).toMatchObject({ valid: false, reason: "timestamp_too_old", signature_matches: false });
    const future = await verify([file("future.http", requestFile({ path: "/hooks", headers: signed(new Date(Date.now() + 10 * 60_000)), body }))], { secret });
    expect(future.code).toBe(1);
    expect(future.stdout).toMatch(/^not valid: timestamp_too_new: /m);
    expect((await verify([old, "--tolerance", "3600"], { secret })).code).toBe(0);
  });

  it("usage errors (exit 2): no secret, a secret that is not whsec_<base64>, an unreadable or malformed file, --headers without --body", async () => {
    const saved = file("u.http", requestFile({ path: "/hooks", headers: signed(new Date()), body }));
    const noSecretGiven = await verify([saved]);
    expect(noSecretGiven.code).toBe(2);
    expect(noSecretGiven.stderr).toMatch(/SVC_WEBHOOK_SECRET/);
    const badSecret = await verify([saved], { secret: "not-a-secret-value" });
    expect(badSecret.code).toBe(2);
    expect(badSecret.stderr + badSecret.stdout).not.toContain("not-a-secret-value");
    expect((await verify([path.join(dir, "missing.http")], { secret })).code).toBe(2);
    const noBlank = await verify([file("noblank.http", "webhook-id: x\nwebhook-timestamp: 1")], { secret });
    expect(noBlank.code).toBe(2);
    expect(noBlank.stderr).toMatch(/no blank line between the headers and the body/);
    expect((await verify(["--headers", saved], { secret })).code).toBe(2);
  });
});
