import { createHmac } from "node:crypto";
import {
  PUBLIC_SANDBOX_KEY,
  SANDBOX_BODY_PREFIX,
  apiKeyFromBody,
  generateApiKey,
  hashApiKey,
  keyHint,
  parseApiKey,
  sameKeyHash,
  type KeyMode,
} from "./api-key";
import { BASE62_ALPHABET } from "./base62";

const MODES: KeyMode[] = ["test", "live", "agent"];
const PREFIXES: Record<KeyMode, string> = { test: "svc_test_", live: "svc_live_", agent: "svc_agent_" };

/** Every key that differs from `key` in exactly one character (another base62 character, or a non-base62 one). */
function singleCharacterVariants(key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < key.length; i += 1) {
    const original = key[i] as string;
    const replacements = [BASE62_ALPHABET[(BASE62_ALPHABET.indexOf(original) + 1) % 62] as string, original === "_" ? "x" : "_", "-"];
    for (const r of replacements) if (r !== original) out.push(key.slice(0, i) + r + key.slice(i + 1));
  }
  return out;
}

describe("generateApiKey", () => {
  it.each(MODES)("makes %s keys of prefix + 30 base62 characters + 6-character checksum", (mode) => {
    const key = generateApiKey(mode);
    expect(key.startsWith(PREFIXES[mode])).toBe(true);
    expect(key.slice(PREFIXES[mode].length)).toMatch(/^[0-9A-Za-z]{36}$/);
    expect(parseApiKey(key)).toEqual({ mode, looksLikeSandbox: false });
  });

  it("never repeats a key", () => {
    const keys = new Set(Array.from({ length: 500 }, () => generateApiKey("live")));
    expect(keys.size).toBe(500);
  });

  it("never mints a key that looks like the public sandbox key", () => {
    for (let i = 0; i < 500; i += 1) {
      const key = generateApiKey("test");
      expect(key.startsWith(`svc_test_${SANDBOX_BODY_PREFIX}`)).toBe(false);
      expect(parseApiKey(key)?.looksLikeSandbox).toBe(false);
    }
  });
});

describe("parseApiKey", () => {
  it.each(MODES)("refuses a %s key with any single character changed", (mode) => {
    const key = generateApiKey(mode);
    const variants = singleCharacterVariants(key);
    expect(variants.length).toBeGreaterThan(key.length);
    for (const variant of variants) expect(parseApiKey(variant)).toBeNull();
  });

  it("refuses every truncation and any extension of a valid key", () => {
    const key = generateApiKey("live");
    for (let n = 0; n < key.length; n += 1) expect(parseApiKey(key.slice(0, n))).toBeNull();
    expect(parseApiKey(`${key}0`)).toBeNull();
    expect(parseApiKey(` ${key}`)).toBeNull();
    expect(parseApiKey(`${key}\n`)).toBeNull();
  });

  it("refuses a valid body and checksum moved to another mode's prefix", () => {
    const key = generateApiKey("test");
    expect(parseApiKey(key.replace("svc_test_", "svc_live_"))).toBeNull();
  });

  it("refuses unknown prefixes, invented keys and junk", () => {
    const body = "a".repeat(30);
    expect(parseApiKey(apiKeyFromBody("live", body))).not.toBeNull();
    for (const candidate of [
      "",
      "svc_live_",
      `svc_prod_${body}000000`,
      `SVC_LIVE_${body}000000`,
      `svc_live_${body}000000`,
      `Bearer ${apiKeyFromBody("live", body)}`,
    ]) {
      expect(parseApiKey(candidate)).toBeNull();
    }
  });

  it("recognises the published sandbox key", () => {
    expect(PUBLIC_SANDBOX_KEY.startsWith(`svc_test_${SANDBOX_BODY_PREFIX}`)).toBe(true);
    expect(parseApiKey(PUBLIC_SANDBOX_KEY)).toEqual({ mode: "test", looksLikeSandbox: true });
  });

  it("does not treat a live or agent key with a sandbox-like body as the sandbox", () => {
    const body = `${SANDBOX_BODY_PREFIX}DemoKey2026v1AbCd`;
    expect(parseApiKey(apiKeyFromBody("live", body))).toEqual({ mode: "live", looksLikeSandbox: false });
    expect(parseApiKey(apiKeyFromBody("agent", body))).toEqual({ mode: "agent", looksLikeSandbox: false });
  });
});

describe("apiKeyFromBody", () => {
  it("builds a valid key from a 30-character base62 body", () => {
    const key = apiKeyFromBody("agent", "0123456789abcdefghijABCDEFGHIJ");
    expect(key).toMatch(/^svc_agent_0123456789abcdefghijABCDEFGHIJ[0-9A-Za-z]{6}$/);
    expect(parseApiKey(key)).toEqual({ mode: "agent", looksLikeSandbox: false });
  });

  it.each(["short", "a".repeat(31), `${"a".repeat(29)}_`, `${"a".repeat(29)}é`])("refuses body %j", (body) => {
    expect(() => apiKeyFromBody("test", body)).toThrow();
  });
});

describe("hashApiKey and sameKeyHash", () => {
  const key = generateApiKey("live");

  it("gives the same 32-byte hash for the same secret and key", () => {
    const a = hashApiKey("server-secret", key);
    expect(a).toHaveLength(32);
    expect(sameKeyHash(a, hashApiKey("server-secret", key))).toBe(true);
  });

  it("is HMAC-SHA256 of the key under the server secret (stored hashes must never drift)", () => {
    expect(hashApiKey("server-secret", key).equals(createHmac("sha256", "server-secret").update(key).digest())).toBe(true);
  });

  it("gives a different hash under a different secret", () => {
    expect(sameKeyHash(hashApiKey("secret-one", key), hashApiKey("secret-two", key))).toBe(false);
  });

  it("gives a different hash for a different key", () => {
    expect(sameKeyHash(hashApiKey("s", key), hashApiKey("s", generateApiKey("live")))).toBe(false);
  });

  it("never stores the key itself", () => {
    expect(hashApiKey("s", key).toString("utf8")).not.toContain(key);
    expect(hashApiKey("s", key).toString("hex")).not.toContain(Buffer.from(key).toString("hex"));
  });

  it("treats hashes of different lengths as different instead of throwing", () => {
    const h = hashApiKey("s", key);
    expect(sameKeyHash(h, h.subarray(0, 16))).toBe(false);
    expect(sameKeyHash(h, Buffer.alloc(0))).toBe(false);
  });
});

describe("keyHint", () => {
  it("shows only the prefix and the last four characters", () => {
    const key = generateApiKey("live");
    const hint = keyHint(key);
    expect(hint).toBe(`svc_live_…${key.slice(-4)}`);
    expect(hint).not.toContain(key.slice(9, 39));
  });

  it("works for keys without a known prefix", () => {
    expect(keyHint("abcdefgh")).toBe("…efgh");
  });
});
