import { Type } from "@sinclair/typebox";
import { commonEnv } from "./common-env";
import { ConfigError, loadConfig } from "./load-config";
import { parseRedisUrl, redisAddresses } from "./redis-url";

// The rules of loadConfig, on the settings every service shares less the fleet's message
// keys (checked on their own below, so each case here needs only KEY_HASH_SECRET).
const { FLEET_MESSAGE_KEY: _key, FLEET_MESSAGE_KEY_ACCEPT: _accept, ...sharedSettings } = commonEnv;
const schema = Type.Object({
  ...sharedSettings,
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8080 }),
  FEATURE_ENABLED: Type.Boolean({ default: false }),
  PRICE_FACTOR: Type.Number({ minimum: 0, default: 1.5 }),
  KEY_HASH_SECRET: Type.String({ minLength: 32 }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: "^https://" })),
});

const SECRET = "s3cr3t-value-that-is-long-enough-1234";

function problemsOf(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(schema, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("loadConfig accepted the environment");
}

describe("the fleet's message keys (every service)", () => {
  const fleetSchema = Type.Object(commonEnv);
  it("require FLEET_MESSAGE_KEY, 32 characters or more, and name it when it is missing or short", () => {
    expect(() => loadConfig(fleetSchema, {})).toThrow(/FLEET_MESSAGE_KEY is required/);
    expect(() => loadConfig(fleetSchema, { FLEET_MESSAGE_KEY: "too-short" })).toThrow(/FLEET_MESSAGE_KEY/);
    expect(loadConfig(fleetSchema, { FLEET_MESSAGE_KEY: "k".repeat(32) }).FLEET_MESSAGE_KEY).toBe("k".repeat(32));
  });

  it("take an empty FLEET_MESSAGE_KEY_ACCEPT as unset (compose passes it empty outside a rotation)", () => {
    expect(loadConfig(fleetSchema, { FLEET_MESSAGE_KEY: "k".repeat(32), FLEET_MESSAGE_KEY_ACCEPT: "" }).FLEET_MESSAGE_KEY_ACCEPT).toBeUndefined();
  });
});

describe("loadConfig", () => {
  it("fills every default when only required variables are set", () => {
    const config = loadConfig(schema, { KEY_HASH_SECRET: SECRET });
    expect(config).toEqual({
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/svc_validate",
      DATABASE_POOL_SIZE: 10,
      REDIS_URL: "redis://127.0.0.1:6379",
      REDIS_PREFIX: "svc",
      SHUTDOWN_TIMEOUT_MS: 25_000,
      PORT: 8080,
      FEATURE_ENABLED: false,
      PRICE_FACTOR: 1.5,
      KEY_HASH_SECRET: SECRET,
    });
  });

  it("treats empty variables as unset", () => {
    const config = loadConfig(schema, { KEY_HASH_SECRET: SECRET, PORT: "", LOG_LEVEL: "" });
    expect(config.PORT).toBe(8080);
    expect(config.LOG_LEVEL).toBe("info");
  });

  it("coerces numbers, integers and booleans from their text", () => {
    const config = loadConfig(schema, {
      KEY_HASH_SECRET: SECRET,
      PORT: "3000",
      DATABASE_POOL_SIZE: "25",
      SHUTDOWN_TIMEOUT_MS: "100",
      FEATURE_ENABLED: "true",
      PRICE_FACTOR: "0.25",
    });
    expect(config).toMatchObject({ PORT: 3000, DATABASE_POOL_SIZE: 25, SHUTDOWN_TIMEOUT_MS: 100, FEATURE_ENABLED: true, PRICE_FACTOR: 0.25 });
    expect(loadConfig(schema, { KEY_HASH_SECRET: SECRET, FEATURE_ENABLED: "false" }).FEATURE_ENABLED).toBe(false);
  });

  it("takes given values over defaults", () => {
    const config = loadConfig(schema, {
      KEY_HASH_SECRET: SECRET,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      DATABASE_URL: "postgres://db.internal/svc",
      REDIS_URL: "rediss://cache.internal:6380",
      REDIS_PREFIX: "fleet-a:svc",
      PUBLIC_URL: "https://api.example.com",
    });
    expect(config).toMatchObject({
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      DATABASE_URL: "postgres://db.internal/svc",
      REDIS_URL: "rediss://cache.internal:6380",
      REDIS_PREFIX: "fleet-a:svc",
      PUBLIC_URL: "https://api.example.com",
    });
  });

  it("reads only the variables of the schema", () => {
    const config = loadConfig(schema, { KEY_HASH_SECRET: SECRET, HOME: "/root", AWS_SECRET_ACCESS_KEY: "nope" }) as Record<string, unknown>;
    expect(config).not.toHaveProperty("HOME");
    expect(config).not.toHaveProperty("AWS_SECRET_ACCESS_KEY");
  });

  it("returns a frozen object", () => {
    const config = loadConfig(schema, { KEY_HASH_SECRET: SECRET });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("does not change the environment it reads", () => {
    const env = { KEY_HASH_SECRET: SECRET, PORT: "3000" };
    loadConfig(schema, env);
    expect(env).toEqual({ KEY_HASH_SECRET: SECRET, PORT: "3000" });
  });

  it("names a missing required variable", () => {
    const err = problemsOf({});
    expect(err.problems).toEqual(["KEY_HASH_SECRET is required but not set"]);
    expect(err.message).toContain("KEY_HASH_SECRET");
    expect(err.name).toBe("ConfigError");
  });

  it("names every bad variable at once, and only those", () => {
    const err = problemsOf({
      KEY_HASH_SECRET: "short-secret-value",
      PORT: "http-port-99999",
      DATABASE_POOL_SIZE: "500",
      SHUTDOWN_TIMEOUT_MS: "12.5",
      FEATURE_ENABLED: "maybe-later",
      PRICE_FACTOR: "-3",
      NODE_ENV: "staging-env",
      LOG_LEVEL: "verbose-level",
      DATABASE_URL: "mysql://user:hunter2@db/svc",
      REDIS_URL: "http://cache.internal",
      REDIS_PREFIX: "has spaces/and slashes",
      PUBLIC_URL: "http://insecure.example.com",
    });
    const named = new Set(err.problems.map((p) => p.split(" ")[0]));
    expect([...named].sort()).toEqual(
      [
        "KEY_HASH_SECRET",
        "PORT",
        "DATABASE_POOL_SIZE",
        "SHUTDOWN_TIMEOUT_MS",
        "FEATURE_ENABLED",
        "PRICE_FACTOR",
        "NODE_ENV",
        "LOG_LEVEL",
        "DATABASE_URL",
        "REDIS_URL",
        "REDIS_PREFIX",
        "PUBLIC_URL",
      ].sort(),
    );
    for (const name of named) expect(err.message).toContain(name);
  });

  it("never puts a bad value in the error", () => {
    const values = {
      KEY_HASH_SECRET: "short-secret-value",
      PORT: "http-port-99999",
      DATABASE_POOL_SIZE: "500",
      FEATURE_ENABLED: "maybe-later",
      NODE_ENV: "staging-env",
      LOG_LEVEL: "verbose-level",
      DATABASE_URL: "mysql://user:hunter2@db/svc",
      REDIS_URL: "http://cache.internal",
      REDIS_PREFIX: "has spaces/and slashes",
      PUBLIC_URL: "http://insecure.example.com",
    };
    const err = problemsOf(values);
    const text = `${err.message}\n${err.problems.join("\n")}\n${JSON.stringify(err)}`;
    for (const value of Object.values(values)) expect(text).not.toContain(value);
    expect(text).not.toContain("hunter2");
  });

  it("names a bad variable next to a missing one", () => {
    const err = problemsOf({ PORT: "0" });
    expect(err.problems).toHaveLength(2);
    expect(err.problems).toEqual(expect.arrayContaining(["KEY_HASH_SECRET is required but not set", expect.stringMatching(/^PORT /)]));
  });

  it("takes REDIS_URL as one server or as a cluster's node list", () => {
    expect(loadConfig(schema, { KEY_HASH_SECRET: SECRET, REDIS_URL: "rediss://cache.internal:6380/2" }).REDIS_URL).toBe("rediss://cache.internal:6380/2");
    const cluster = "redis+cluster://app:pw@10.0.0.1:7000,10.0.0.2:7000,[::1]:7001";
    expect(loadConfig(schema, { KEY_HASH_SECRET: SECRET, REDIS_URL: cluster }).REDIS_URL).toBe(cluster);
    expect(parseRedisUrl(cluster)).toEqual({
      mode: "cluster",
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7000 },
        { host: "::1", port: 7001 },
      ],
      username: "app",
      password: "pw",
      tls: false,
    });
    expect(parseRedisUrl("rediss+cluster://cfg.cache.example:6379")).toMatchObject({ mode: "cluster", tls: true, nodes: [{ host: "cfg.cache.example", port: 6379 }] });
    expect(redisAddresses(cluster)).toBe("10.0.0.1:7000,10.0.0.2:7000,[::1]:7001");
  });

  it("refuses a cluster node list it cannot read, naming REDIS_URL and never echoing the value", () => {
    for (const bad of ["redis+cluster://user:hunter2@10.0.0.1:7000,10.0.0.2", "redis+cluster://", "redis+cluster://10.0.0.1:99999", "redis+cluster://h:1/0"]) {
      const err = problemsOf({ KEY_HASH_SECRET: SECRET, REDIS_URL: bad });
      expect(err.problems).toHaveLength(1);
      expect(err.problems[0]).toMatch(/^REDIS_URL/);
      expect(err.message).toMatch(/redis\+cluster:\/\/(\[user:password@\])?host:port,host:port/);
      expect(err.message).not.toContain("hunter2");
      expect(err.message).not.toContain("10.0.0.");
    }
  });
});
