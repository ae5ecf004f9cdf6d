import { createHmac } from "node:crypto";
import { identifierHash } from "./answer-cache";

describe("identifierHash", () => {
  // Cached answers outlive deployments: the key derivation must never drift.
  it("is HMAC-SHA256 keyed with cache:<secret> over the lower-cased identifier", () => {
    const expected = createHmac("sha256", "cache:s3cret").update("someone@example.com").digest("hex");
    expect(identifierHash("s3cret", "Someone@Example.COM").toString("hex")).toBe(expected);
    expect(identifierHash("s3cret", "+12125550123").toString("hex")).toBe("fb0520049e054ca2c18e2c37e75673e61e972e5e20f47333d4dcc1f04d47f69c");
  });

  it("depends on the secret", () => {
    expect(identifierHash("one", "+12125550123").equals(identifierHash("two", "+12125550123"))).toBe(false);
  });
});
