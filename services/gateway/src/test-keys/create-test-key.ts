import type { NextFunction, Request, Response } from "express";
import { ApiError } from "@svc/contract";
import { generateApiKey, hashApiKey, keyHint, networkOf, parseEmail, SCOPES } from "@svc/domain";
import { insertAccount, insertApiKey, lockTestKeyAddress, recordTestKeyRequest, testKeyAccountOf, testKeysIssuedTo, withTransaction } from "@svc/store";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { secondsUntilUtcMidnight, utcDay } from "../time";
import { issueChallenge, verifyChallengeToken } from "./proof-of-work";

export const KEYS_PER_ADDRESS = 3;
export const ADDRESS_WINDOW_DAYS = 30;
export const REQUESTS_PER_NETWORK_PER_DAY = 3;

/**
 * Counts every POST /v1/test-keys against the caller's network (IPv4 address or
 * IPv6 /64) for the UTC day, before anything else, whatever the outcome.
 */
export function testKeyNetworkLimit(deps: Pick<Deps, "config" | "redis" | "now">) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const now = deps.now();
      const counter = `${deps.config.REDIS_PREFIX}:testkeys:net:${utcDay(now)}:${networkOf(req.ip)}`;
      const [[, count]] = (await deps.redis.multi().incr(counter).expire(counter, 2 * 86_400).exec()) as [[null, number], [null, number]];
      if (count > REQUESTS_PER_NETWORK_PER_DAY) {
        throw new ApiError("rate_limited", {
          message: "This network has used its test-key requests for today.",
          retryAfterSeconds: secondsUntilUtcMidnight(now),
        });
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** GET /v1/test-keys/challenge: a signed proof-of-work challenge, single use, for ten minutes. */
export function challengeRoute(deps: Pick<Deps, "config" | "now">): RouteHandler {
  return defineRoute("getTestKeyChallenge")(async () => {
    const c = issueChallenge(deps.config.KEY_HASH_SECRET, deps.config.TEST_KEY_POW_DIFFICULTY, deps.now());
    return {
      status: 200,
      headers: { "Cache-Control": "no-store" },
      body: {
        challenge: c.challenge,
        algorithm: "sha256",
        difficulty: c.difficulty,
        expires_at: c.expiresAt.toISOString(),
        token_format: "<challenge>:<nonce>, where SHA-256 of that string starts with `difficulty` zero bits",
      },
    };
  });
}

/**
 * POST /v1/test-keys: a personal test key for a person who solved the challenge.
 * At most 3 keys per address in 30 days, enforced under an advisory lock so
 * concurrent requests cannot exceed it. Keys of one address share one account.
 * "Address" means the mailbox: spellings that reach the same one (`a+x@…`,
 * `a.b@gmail.com` for `ab@gmail.com`, …) count together; the store compares them
 * (see lockTestKeyAddress, testKeysIssuedTo). The address as given is what is kept.
 */
/** Issuing a key: the proof of work spent in Redis, the key stored, this process's live-key set told at once. */
export type TestKeyDeps = Pick<Deps, "config" | "redis" | "store" | "caches" | "now">;

export function createTestKeyRoute(deps: TestKeyDeps): RouteHandler {
  return defineRoute("createTestKey")(async ({ req, body }) => {
    const now = deps.now();
    const email = parseEmail(body.email);
    if (!email.valid) throw new ApiError("invalid_request", { param: "email", message: "email must be a valid e-mail address." });
    const address = email.email.toLowerCase();
    const verified = verifyChallengeToken(deps.config.KEY_HASH_SECRET, body.challenge_token, now);
    const fresh =
      verified &&
      (await deps.redis.set(`${deps.config.REDIS_PREFIX}:testkeys:pow:${verified.nonce}`, "1", "EX", Math.max(1, Math.ceil((verified.expiresAt.getTime() - now.getTime()) / 1000)), "NX")) === "OK";
    if (!fresh) {
      throw new ApiError("invalid_request", {
        param: "challenge_token",
        message: "challenge_token is missing, expired, already used or does not solve the challenge.",
        suggestion: "Fetch a new challenge from GET /v1/test-keys/challenge and solve it.",
      });
    }
    const network = networkOf(req.ip);
    const details = { email: address, name: body.name, company: body.company, useCase: body.use_case, network, createdAt: now };
    const key = generateApiKey("test");
    const keyHash = hashApiKey(deps.config.KEY_HASH_SECRET, key);
    const issued = await withTransaction(deps.store.pool, async (client) => {
      await lockTestKeyAddress(client, address);
      const since = new Date(now.getTime() - ADDRESS_WINDOW_DAYS * 86_400_000);
      if ((await testKeysIssuedTo(client, address, since)) >= KEYS_PER_ADDRESS) return null;
      const accountId = (await testKeyAccountOf(client, address)) ?? (await insertAccount(client, { name: `Test: ${body.company}`.slice(0, 200), balanceMicros: 0n })).id;
      const created = await insertApiKey(client, {
        accountId,
        mode: "test",
        keyHash,
        hint: keyHint(key),
        scopes: [...SCOPES],
        allowIps: [],
        dailySpendCapMicros: null,
        expiresAt: null,
      });
      await recordTestKeyRequest(client, { ...details, outcome: "issued", apiKeyId: created.id });
      return created;
    });
    if (!issued) {
      await recordTestKeyRequest(deps.store.pool, { ...details, outcome: "refused_exists", apiKeyId: null });
      throw new ApiError("test_key_exists");
    }
    // Other gateway processes learn of the key from its insert's notification; this
    // one need not wait for it.
    deps.caches.liveKeys.noteChanged(keyHash.toString("hex"));
    req.log.info({ keyId: issued.id }, "test key issued");
    return {
      status: 201,
      headers: { "Cache-Control": "no-store" },
      body: {
        object: "test_key",
        key,
        mode: "test",
        scopes: [...SCOPES],
        created_at: issued.created_at.toISOString(),
        live_access: { status: "requested", note: "Live access is reviewed by hand; we reply to the address you gave." },
      },
    };
  });
}
