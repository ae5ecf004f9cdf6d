import { Webhook } from "standardwebhooks";
import { newSigningSecret, signWebhook } from "./signing";
import { decryptSecret, encryptSecret } from "./secrets";
import { randomBytes } from "node:crypto";

describe("webhook signing", () => {
  test("signatures verify with the independent Standard Webhooks library", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({ type: "webhook.test", id: "evt_abc", data: { ünïcode: "✓" } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = { "webhook-id": "evt_abc", "webhook-timestamp": String(ts), "webhook-signature": signWebhook(secret, "evt_abc", ts, body) };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("a signature does not verify with another secret, body or id", () => {
    const secret = newSigningSecret();
    const ts = Math.floor(Date.now() / 1000);
    const sig = signWebhook(secret, "evt_1", ts, "{}");
    expect(() => new Webhook(newSigningSecret()).verify("{}", { "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": sig })).toThrow();
    expect(() => new Webhook(secret).verify("{ }", { "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": sig })).toThrow();
    expect(() => new Webhook(secret).verify("{}", { "webhook-id": "evt_2", "webhook-timestamp": String(ts), "webhook-signature": sig })).toThrow();
  });

  test("secrets are new each time and survive encryption at rest, which detects tampering", () => {
    const key = randomBytes(32);
    const secret = newSigningSecret();
    expect(newSigningSecret()).not.toBe(secret);
    const sealed = encryptSecret(key, secret);
    expect(sealed.toString("latin1")).not.toContain(secret.slice(6));
    expect(decryptSecret(key, sealed)).toBe(secret);
    const tampered = Buffer.from(sealed);
    tampered[20] = (tampered[20] as number) ^ 1;
    expect(() => decryptSecret(key, tampered)).toThrow();
    expect(() => decryptSecret(randomBytes(32), sealed)).toThrow();
  });
});
