import { randomFillSync } from "node:crypto";

export const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Random bytes drawn from the CSPRNG 4 KB at a time: a request makes several ids,
// and one call per id cost more than the bytes themselves.
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] as number;
}

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += BASE62_ALPHABET[b % 62];
  }
  return out;
}

/** Base62 of a non-negative integer, left-padded with `0` to `width`. */
export function encodeBase62(value: number, width: number): string {
  let n = Math.floor(value);
  let out = "";
  do {
    out = BASE62_ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(width, "0");
}
