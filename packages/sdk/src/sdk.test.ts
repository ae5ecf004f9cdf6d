import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { EVENT_PAYLOADS, ROUTES } from "@svc/contract";
import { ShapeChecker } from "./shape";
import { shapes } from "./transport";
import { SDK_VERSION } from "./version";
import { backoffDelay } from "./retry";

/** Facts about the SDK itself that keep it in step with the contract. */
const SRC = __dirname;
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path.join(dir, e.name)] : []));

describe("the SDK and the contract", () => {
  it("wraps every operation of the contract in a method (the OpenAPI document itself excepted)", () => {
    const used = new Set(sources(SRC).flatMap((f) => [...readFileSync(f, "utf8").matchAll(/operation\("(\w+)"\)/g)].map((m) => m[1])));
    const expected = ROUTES.map((r) => r.operationId).filter((id) => id !== "getOpenApi");
    expect(expected.filter((id) => !used.has(id))).toEqual([]);
    expect([...used].filter((id) => !ROUTES.some((r) => r.operationId === id))).toEqual([]);
  });

  it("resolves every $ref of every response and event schema", () => {
    for (const r of ROUTES) for (const res of Object.values(r.responses)) expect([r.operationId, shapes.unresolved(res.schema)]).toEqual([r.operationId, []]);
    for (const [type, schema] of Object.entries(EVENT_PAYLOADS)) expect([type, shapes.unresolved(schema)]).toEqual([type, []]);
  });

  it("keeps SDK_VERSION equal to package.json", () => {
    expect(SDK_VERSION).toBe(JSON.parse(readFileSync(path.join(SRC, "..", "package.json"), "utf8")).version);
  });

  it("has no static node: import in the core (file helpers import node:fs dynamically)", () => {
    for (const f of sources(SRC)) expect([path.basename(f), /^import [^;]*from "node:/m.test(readFileSync(f, "utf8"))]).toEqual([path.basename(f), false]);
  });
});

describe("the lenient shape check", () => {
  const Money = { $id: "Money", type: "object", required: ["amount", "currency"], properties: { amount: { type: "string", pattern: "^\\d+\\.\\d{2,6}$" }, currency: { const: "USD", type: "string" } } };
  const Thing = {
    type: "object",
    required: ["object", "status", "price", "tags", "note"],
    properties: {
      object: { const: "thing", type: "string" },
      status: { type: "string", enum: ["a", "b"] },
      price: { $ref: "Money" },
      tags: { type: "array", items: { type: "string" } },
      note: { anyOf: [{ type: "string" }, { type: "null" }] },
      count: { type: "integer" },
    },
  };
  const check = new ShapeChecker([Money]);
  const ok = { object: "thing", status: "a", price: { amount: "1.00", currency: "USD" }, tags: ["x"], note: null };

  it("accepts unknown fields, unknown enum values, other formats and patterns", () => {
    expect(check.check(Thing, ok)).toBeNull();
    expect(check.check(Thing, { ...ok, status: "zz", extra: { a: 1 }, price: { amount: "1", currency: "EUR", extra: 1 } })).toBeNull();
  });

  it("points at the first field that is missing or of the wrong JSON type, or a wrong object discriminator", () => {
    expect(check.check(Thing, { ...ok, price: undefined })).toBe("price");
    expect(check.check(Thing, { ...ok, price: { amount: 1, currency: "USD" } })).toBe("price.amount");
    expect(check.check(Thing, { ...ok, tags: ["x", 2] })).toBe("tags[1]");
    expect(check.check(Thing, { ...ok, note: 3 })).toBe("note");
    expect(check.check(Thing, { ...ok, count: "3" })).toBe("count");
    expect(check.check(Thing, { ...ok, object: "other" })).toBe("object");
    expect(check.check(Thing, [ok])).toBe("(root)");
  });
});

it("full jitter stays within [0, min(cap, base × 2^(n-1)))", () => {
  for (let n = 1; n <= 8; n += 1) {
    const ceiling = Math.min(8_000, 500 * 2 ** (n - 1));
    expect(backoffDelay(n, { initialDelayMs: 500, maxDelayMs: 8_000, random: () => 0 })).toBe(0);
    expect(backoffDelay(n, { initialDelayMs: 500, maxDelayMs: 8_000, random: () => 0.9999999 })).toBe(ceiling - 1);
  }
});
