import Ajv from "ajv";
import type { Static, TObject } from "@sinclair/typebox";
import { parseRedisUrl } from "./redis-url";

/** Thrown at start-up when the environment does not satisfy a service's schema. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, removeAdditional: true });

/**
 * Reads the environment once, against one schema per service: coerces numbers and
 * booleans, fills defaults, and fails fast naming every variable that is wrong.
 * Values are never echoed (they may be secrets).
 */
export function loadConfig<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Readonly<Static<T>> {
  const candidate: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const raw = env[name];
    if (raw !== undefined && raw !== "") candidate[name] = raw;
  }
  const validate = ajv.compile(schema);
  if (!validate(candidate)) {
    const problems = (validate.errors ?? []).map((e) => {
      const name = e.instancePath.replace(/^\//, "") || String((e.params as { missingProperty?: string }).missingProperty ?? "");
      if (e.keyword === "required") return `${name} is required but not set`;
      if (e.keyword === "enum") return `${name} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`;
      return `${name} ${e.message ?? "is invalid"}`;
    });
    throw new ConfigError(problems);
  }
  // REDIS_URL's two forms (one server, a cluster's node list) need more than a pattern to check.
  if (typeof candidate.REDIS_URL === "string") {
    try {
      parseRedisUrl(candidate.REDIS_URL);
    } catch (err) {
      throw new ConfigError([(err as Error).message]);
    }
  }
  return Object.freeze(candidate) as Readonly<Static<T>>;
}
