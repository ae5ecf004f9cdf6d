import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "@svc/domain";

/**
 * A self-hosted anti-automation challenge: the server signs a random nonce with an
 * expiry and a difficulty; the client must find a `solution` such that
 * SHA-256("<challenge>:<solution>") starts with `difficulty` zero bits. Costly to
 * solve in bulk, one hash to verify, no third party. Single use is enforced by the
 * caller (Redis SET NX on the nonce).
 */
export const CHALLENGE_TTL_SECONDS = 600;

type Payload = { n: string; e: number; d: number };

const b64 = (buf: Buffer | string) => Buffer.from(buf).toString("base64url");

function sign(secret: string, payload: string): string {
  return createHmac("sha256", `pow:${secret}`).update(payload).digest("base64url").slice(0, 32);
}

export function issueChallenge(secret: string, difficulty: number, now: Date): { challenge: string; expiresAt: Date; difficulty: number } {
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000);
  const payload = b64(JSON.stringify({ n: randomBase62(22), e: Math.floor(expiresAt.getTime() / 1000), d: difficulty } satisfies Payload));
  return { challenge: `${payload}.${sign(secret, payload)}`, expiresAt, difficulty };
}

export function leadingZeroBits(digest: Buffer): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    bits += Math.clz32(byte) - 24;
    break;
  }
  return bits;
}

export type VerifiedChallenge = { nonce: string; expiresAt: Date };

/** Checks signature, expiry and work; returns the nonce (for single-use) or null. */
export function verifyChallengeToken(secret: string, token: string, now: Date): VerifiedChallenge | null {
  const colon = token.lastIndexOf(":");
  if (colon <= 0) return null;
  const challenge = token.slice(0, colon);
  const solution = token.slice(colon + 1);
  if (!/^[A-Za-z0-9]{1,64}$/.test(solution)) return null;
  const [payload, signature, extra] = challenge.split(".");
  if (!payload || !signature || extra !== undefined) return null;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  let parsed: Payload;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Payload;
  } catch {
    return null;
  }
  if (typeof parsed.n !== "string" || typeof parsed.e !== "number" || typeof parsed.d !== "number") return null;
  if (parsed.e * 1000 <= now.getTime()) return null;
  const digest = createHash("sha256").update(`${challenge}:${solution}`).digest();
  if (leadingZeroBits(digest) < parsed.d) return null;
  return { nonce: parsed.n, expiresAt: new Date(parsed.e * 1000) };
}

/** Brute-force solver (tests and the CLI; browsers use the page's script). */
export function solveChallenge(challenge: string, difficulty: number): string {
  for (let i = 0; ; i += 1) {
    const solution = i.toString(36);
    if (leadingZeroBits(createHash("sha256").update(`${challenge}:${solution}`).digest()) >= difficulty) return solution;
  }
}
