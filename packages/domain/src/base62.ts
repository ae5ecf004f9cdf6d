import { randomBytes } from "node:crypto";

export const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62_ALPHABET[b % 62];
      if (out.length === length) break;
    }
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
