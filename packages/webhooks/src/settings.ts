import { readFileSync } from "node:fs";
import { ConfigError, Type } from "@svc/config";
import { parseRanges, type AddressPolicy } from "@svc/domain";
import { dataKey } from "./secrets";

/** Settings the gateway and the webhook-dispatcher both read (spread into their schemas). */
export const webhookEnv = {
  /** 32 bytes, base64: encrypts webhook signing secrets at rest. Same value on the gateway and the dispatcher. */
  DATA_ENCRYPTION_KEY: Type.String({ minLength: 44 }),
  /**
   * Development and tests only: comma-separated CIDR ranges webhook URLs may
   * resolve to although they are not public (e.g. 127.0.0.0/8). Refused in production.
   */
  WEBHOOK_ALLOW_PRIVATE_RANGES: Type.String({ default: "" }),
  /** Development and tests only: a PEM file of extra CAs trusted for webhook TLS. Refused in production. */
  WEBHOOK_EXTRA_CA_FILE: Type.String({ default: "" }),
};

export type WebhookSettings = { dataKey: Buffer<ArrayBufferLike>; policy: AddressPolicy; extraCa: string[] };

/** Validates the webhook settings once at start-up, failing with every problem named. */
export function webhookSettings(config: {
  NODE_ENV: string;
  DATA_ENCRYPTION_KEY: string;
  WEBHOOK_ALLOW_PRIVATE_RANGES: string;
  WEBHOOK_EXTRA_CA_FILE: string;
}): WebhookSettings {
  const problems: string[] = [];
  const production = config.NODE_ENV === "production";
  let key: Buffer = Buffer.alloc(0);
  try {
    key = dataKey(config.DATA_ENCRYPTION_KEY);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const cidrs = config.WEBHOOK_ALLOW_PRIVATE_RANGES.split(",").map((s) => s.trim()).filter(Boolean);
  let policy: AddressPolicy = {};
  if (cidrs.length > 0 && production) problems.push("WEBHOOK_ALLOW_PRIVATE_RANGES is for development and tests and cannot be set in production");
  try {
    policy = { allowedPrivate: parseRanges(cidrs) };
  } catch {
    problems.push("WEBHOOK_ALLOW_PRIVATE_RANGES must be comma-separated CIDR ranges, e.g. 127.0.0.0/8");
  }
  const extraCa: string[] = [];
  if (config.WEBHOOK_EXTRA_CA_FILE) {
    if (production) problems.push("WEBHOOK_EXTRA_CA_FILE is for development and tests and cannot be set in production");
    try {
      extraCa.push(readFileSync(config.WEBHOOK_EXTRA_CA_FILE, "utf8"));
    } catch {
      problems.push("WEBHOOK_EXTRA_CA_FILE cannot be read");
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { dataKey: key, policy, extraCa };
}
