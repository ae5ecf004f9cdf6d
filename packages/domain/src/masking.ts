/** A number as digits alone, perhaps after a `+`. */
const PLAIN_NUMBER = /^(\+?)(\d+)$/;

/**
 * Inputs are masked on every read after the creating response: numbers keep their
 * first three and last two digits (when they have at least eight) and their layout (spaces and phone punctuation),
 * e-mail addresses the first character of the local part and the domain. Anything
 * else in a "number" (letters, `@`: an address sent in `numbers`, a vanity number)
 * is masked too.
 */
export function maskNumberInput(input: string): string {
  // Most inputs are E.164 as sent: the same result without a pass per character (a 50,000-row job masks every row).
  const plain = PLAIN_NUMBER.exec(input);
  if (plain) {
    const [, plus, d] = plain as unknown as [string, string, string];
    return d.length >= 8 ? `${plus}${d.slice(0, 3)}${"*".repeat(d.length - 5)}${d.slice(-2)}` : `${plus}${"*".repeat(d.length)}`;
  }
  const digits = input.replace(/\D/g, "").length;
  // With fewer than 8 digits, keeping five would show nearly all of them: mask every one.
  const keep = digits >= 8;
  let seen = 0;
  return input.replace(/\d|[^\s+\-().\/]/gu, (c) => {
    if (!/\d/.test(c)) return "*";
    seen += 1;
    return keep && (seen <= 3 || seen > digits - 2) ? c : "*";
  });
}

export function maskEmailInput(input: string): string {
  // By code point: the first UTF-16 unit of an emoji alone is not text Postgres can store.
  const first = String.fromCodePoint(input.codePointAt(0) ?? 42);
  const at = input.lastIndexOf("@");
  if (at <= 0) return input.length <= first.length ? "*" : `${first}${"*".repeat(Math.min(input.length - first.length, 8))}`;
  return `${first}***${input.slice(at)}`;
}
