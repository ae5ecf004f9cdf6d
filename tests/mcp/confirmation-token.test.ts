import { ConfirmationBook, canonicalJson, type Ticket } from "../../packages/mcp/src/confirmation-token";

/**
 * The confirmation book on its own, with an injected clock: a token's life (check →
 * hold → spend or release), and the canonical form its argument digest is taken of.
 * The same rules through the built server, against the real gateway: confirm.test.ts.
 */

describe("canonicalJson: the canonical form of a value is that of its JSON", () => {
  const viaJson = (v: unknown) => canonicalJson(JSON.parse(JSON.stringify(v) ?? "null"));

  it("undefined is dropped from an object, null in an array, null on its own, as JSON.stringify does", () => {
    expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
    expect(canonicalJson({ numbers: undefined, checks: ["spam"] })).toBe(canonicalJson({ checks: ["spam"] }));
    expect(canonicalJson([1, undefined, 2])).toBe("[1,null,2]");
    expect(canonicalJson([undefined])).toBe(canonicalJson([null]));
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson({ a: { b: undefined, c: [undefined, { d: undefined }] } })).toBe('{"a":{"c":[null,{}]}}');
  });

  it("what else JSON cannot hold goes the same way: functions and symbols dropped or null, holes of a sparse array null", () => {
    const sparse = [1, , 3];
    expect(canonicalJson(sparse)).toBe("[1,null,3]");
    expect(canonicalJson({ f: () => 1, s: Symbol("x"), k: 1 })).toBe('{"k":1}');
    expect(canonicalJson([() => 1, Symbol("x")])).toBe("[null,null]");
    expect(canonicalJson({ at: new Date(0), n: new Number(2), t: new String("x") })).toBe('{"at":"1970-01-01T00:00:00.000Z","n":2,"t":"x"}');
    expect(canonicalJson({ x: NaN, y: Infinity, z: -0 })).toBe('{"x":null,"y":null,"z":0}');
    expect(() => canonicalJson({ big: 1n })).toThrow(TypeError);
  });

  it("keys sorted at every level, arrays in their order; equal to the canonical form of the value's JSON round trip", () => {
    expect(canonicalJson({ b: { y: 1, x: 2 }, a: [3, 1] })).toBe('{"a":[3,1],"b":{"x":2,"y":1}}');
    expect(canonicalJson(["b", "a"])).not.toBe(canonicalJson(["a", "b"]));
    const values: unknown[] = [
      { numbers: undefined, emails: ["a@example.com"], checks: ["spam", "email"], wait: undefined },
      { list: [undefined, , null, { z: undefined, y: [() => 0] }], at: new Date(86_400_000), "é": "ü", "\u0000k": 1 },
      [[], {}, [undefined], { a: undefined }],
      "text",
      12.5,
      null,
      undefined,
    ];
    for (const v of values) expect(canonicalJson(v)).toBe(viaJson(v));
  });
});

describe("ConfirmationBook: check, hold, then spend or release", () => {
  let now = 1_000_000;
  const book = () => new ConfirmationBook({ ttlMs: 60_000, now: () => now });
  const ARGS = { numbers: ["+14155550100"], checks: ["spam"] };
  const ticketOf = (b: ConfirmationBook, token: string, args: Record<string, unknown> = ARGS): Ticket => {
    const c = b.check("create_job", args, token);
    if (!c.ok) throw new Error(`token refused: ${c.problem}`);
    return c.ticket;
  };
  beforeEach(() => void (now = 1_000_000));

  it("a token issued for arguments with absent fields fits the same arguments without them", () => {
    const b = book();
    const { token } = b.issue("create_job", { ...ARGS, emails: undefined }, 5n);
    expect(b.check("create_job", ARGS, token)).toMatchObject({ ok: true });
    expect(b.check("create_job", { ...ARGS, emails: [] }, token)).toEqual({ ok: false, problem: "arguments_changed" });
  });

  it("held: a second hold or check is in_use; spent: already_used, for good", () => {
    const b = book();
    const { token } = b.issue("create_job", ARGS, 5n);
    const t = ticketOf(b, token);
    const held = b.hold(t, 5n);
    if (!held.ok) throw new Error(held.problem);
    expect(held.hold.state).toBe("held");
    expect(b.check("create_job", ARGS, token)).toEqual({ ok: false, problem: "in_use" });
    expect(b.hold(t, 5n)).toMatchObject({ ok: false, problem: "in_use" });
    held.hold.spend();
    held.hold.release(); // settled once: the later call changes nothing
    expect(held.hold.state).toBe("spent");
    expect(b.check("create_job", ARGS, token)).toEqual({ ok: false, problem: "already_used" });
    expect(b.hold(t, 5n)).toMatchObject({ ok: false, problem: "already_used" });
  });

  it("released: usable again for the same amount only, until it expires", () => {
    const b = book();
    const { token } = b.issue("create_job", ARGS, 5n);
    const held = b.hold(ticketOf(b, token), 7n);
    if (!held.ok) throw new Error(held.problem);
    held.hold.release();
    expect(held.hold.state).toBe("released");
    const again = ticketOf(b, token);
    expect(again.sentWithMicros).toBe(7n);
    expect(b.hold(again, 8n)).toEqual({ ok: false, problem: "amount_changed", sentWithMicros: 7n });
    const second = b.hold(again, 7n);
    expect(second.ok).toBe(true);
    if (second.ok) second.hold.spend();
    expect(b.check("create_job", ARGS, token)).toEqual({ ok: false, problem: "already_used" });

    const other = b.issue("create_job", ARGS, 5n).token;
    const h = b.hold(ticketOf(b, other), 5n);
    if (h.ok) h.hold.release();
    now += 60_000;
    expect(b.check("create_job", ARGS, other)).toEqual({ ok: false, problem: "expired" });
  });

  it("a token that expires while it waits to be held is refused at hold", () => {
    const b = book();
    const { token } = b.issue("create_job", ARGS, 5n);
    const t = ticketOf(b, token);
    now += 60_000;
    expect(b.hold(t, 5n)).toMatchObject({ ok: false, problem: "expired" });
  });
});
