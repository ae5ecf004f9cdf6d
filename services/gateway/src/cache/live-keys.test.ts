import { createHash, randomBytes } from "node:crypto";
import { LiveKeySet } from "./live-keys";

const hashOf = (n: number) => createHash("sha256").update(`key-${n}`).digest();
/** The base as the store returns it: 8-byte prefixes in key-hash (byte) order. */
const baseOf = (hashes: Buffer[]) => Buffer.concat([...hashes].sort(Buffer.compare).map((h) => h.subarray(0, LiveKeySet.PREFIX_BYTES)));

function loaded(hashes: Buffer[], set = new LiveKeySet()): LiveKeySet {
  expect(set.finishLoad(set.beginLoad(true), baseOf(hashes))).toBe(true);
  return set;
}

describe("LiveKeySet", () => {
  it("cannot tell anything until loaded, nor after its connection is lost", () => {
    const set = new LiveKeySet();
    expect(set.mightExist(hashOf(1))).toBeNull();
    loaded([hashOf(1)], set);
    expect(set.mightExist(hashOf(1))).toBe(true);
    set.distrust();
    expect(set.mightExist(hashOf(1))).toBeNull();
  });

  it("finds every loaded key and (practically) no other", () => {
    const live = Array.from({ length: 5_000 }, (_, i) => hashOf(i));
    const set = loaded(live);
    for (const h of live) expect(set.mightExist(h)).toBe(true);
    let falsePositives = 0;
    for (let i = 0; i < 20_000; i += 1) if (set.mightExist(randomBytes(32))) falsePositives += 1;
    expect(falsePositives).toBe(0);
    expect(set.stats()).toEqual({ keys: 5_000, overrides: 0, bytes: 40_000 });
  });

  it("answers at the edges of the sorted base and for an empty one", () => {
    const empty = loaded([]);
    expect(empty.mightExist(hashOf(1))).toBe(false);
    const lowest = Buffer.alloc(32, 0);
    const highest = Buffer.alloc(32, 0xff);
    const set = loaded([lowest, highest, hashOf(7)]);
    expect(set.mightExist(lowest)).toBe(true);
    expect(set.mightExist(highest)).toBe(true);
    const almostHighest = Buffer.from(highest);
    almostHighest[7] = 0xfe;
    expect(set.mightExist(almostHighest)).toBe(false);
  });

  it("takes a key announced after the load at once, and drops it when its row says it is gone", () => {
    const set = loaded([hashOf(1)]);
    const fresh = hashOf(2);
    expect(set.mightExist(fresh)).toBe(false);
    set.noteChanged(fresh.toString("hex"));
    expect(set.mightExist(fresh)).toBe(true);
    set.settle(fresh.toString("hex"), true);
    expect(set.mightExist(fresh)).toBe(true);
    // Revoked: announced (still "maybe" until read), then settled as dead.
    set.noteChanged(hashOf(1).toString("hex"));
    expect(set.mightExist(hashOf(1))).toBe(true);
    set.settle(hashOf(1).toString("hex"), false);
    expect(set.mightExist(hashOf(1))).toBe(false);
  });

  it("never lets a revoked key hide another live key sharing its 8-byte prefix", () => {
    const a = hashOf(1);
    const b = Buffer.from(a);
    b.writeUInt8(b.readUInt8(31) ^ 0xff, 31); // same prefix, another key
    const set = loaded([a, b]);
    set.settle(a.toString("hex"), false);
    expect(set.mightExist(a)).toBe(false);
    expect(set.mightExist(b)).toBe(true);
  });

  it("a fresh load starts over; a refresh keeps answering and folds only what its base already says", () => {
    const set = loaded([hashOf(1), hashOf(2)]);
    set.settle(hashOf(3).toString("hex"), true); // created after the load
    set.settle(hashOf(2).toString("hex"), false); // revoked after the load
    const refresh = set.beginLoad(false);
    expect(set.mightExist(hashOf(1))).toBe(true); // still answering
    // A change announced while the refresh reads: hashOf(4) created.
    set.settle(hashOf(4).toString("hex"), true);
    // The refresh's base saw 1, 3 and (read before its revocation) 2, but not 4.
    expect(set.finishLoad(refresh, baseOf([hashOf(1), hashOf(2), hashOf(3)]))).toBe(true);
    expect(set.mightExist(hashOf(1))).toBe(true);
    expect(set.mightExist(hashOf(2))).toBe(false);
    expect(set.mightExist(hashOf(3))).toBe(true);
    expect(set.mightExist(hashOf(4))).toBe(true);
    expect(set.stats().overrides).toBe(2); // 2 (dead, base says live) and 4 (live, not in base)

    const fresh = set.beginLoad(true);
    expect(set.mightExist(hashOf(1))).toBeNull();
    expect(set.finishLoad(fresh, baseOf([hashOf(1)]))).toBe(true);
    expect(set.mightExist(hashOf(4))).toBe(false);
  });

  it("ignores a load that a newer load or a lost connection superseded", () => {
    const set = loaded([hashOf(1)]);
    const old = set.beginLoad(false);
    set.distrust();
    expect(set.finishLoad(old, baseOf([]))).toBe(false);
    expect(set.mightExist(hashOf(1))).toBeNull();
    const a = set.beginLoad(true);
    const b = set.beginLoad(true);
    expect(set.finishLoad(a, baseOf([]))).toBe(false);
    expect(set.finishLoad(b, baseOf([hashOf(1)]))).toBe(true);
    expect(set.mightExist(hashOf(1))).toBe(true);
  });

  it("wakes whoever waits for it once loaded", async () => {
    const set = new LiveKeySet();
    let woke = false;
    const waiting = set.whenTrusted().then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    loaded([], set);
    await waiting;
    expect(woke).toBe(true);
  });

  it("confirms a bounded number of refusals with the database, refilling over time", () => {
    let now = 1_000_000;
    const set = new LiveKeySet(20, () => now);
    let granted = 0;
    for (let i = 0; i < 100; i += 1) if (set.takeMissConfirmation()) granted += 1;
    expect(granted).toBe(20);
    now += 500;
    granted = 0;
    for (let i = 0; i < 100; i += 1) if (set.takeMissConfirmation()) granted += 1;
    expect(granted).toBe(10);
  });

  it("asks to be folded once many keys changed since the load", () => {
    const set = loaded([]);
    for (let i = 0; i <= LiveKeySet.FOLD_AFTER; i += 1) set.settle(hashOf(i).toString("hex"), true);
    expect(set.needsFolding).toBe(true);
  });
});
