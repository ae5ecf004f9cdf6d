import { createHmac, randomBytes } from "node:crypto";

/** A new signing secret: `whsec_` + base64 of 24 random bytes (the Standard Webhooks form). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/**
 * Standard Webhooks signature: `v1,` + base64 HMAC-SHA256, keyed with the base64
 * part of the secret decoded, over `<id>.<timestamp>.<body>`.
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}
