/**
 * Inputs are masked on every read after the creating response: numbers keep their
 * first three and last two digits and their layout (spaces and phone punctuation),
 * e-mail addresses the first character of the local part and the domain. Anything
 * else in a "number" (letters, `@`: an address sent in `numbers`, a vanity number)
 * is masked too.
 */
export function maskNumberInput(input: string): string {
  const digits = input.replace(/\D/g, "").length;
  let seen = 0;
  return input.replace(/\d|[^\s+\-().\/]/gu, (c) => {
    if (!/\d/.test(c)) return "*";
    seen += 1;
    return seen <= 3 || seen > digits - 2 ? c : "*";
  });
}

export function maskEmailInput(input: string): string {
  const at = input.lastIndexOf("@");
  if (at <= 0) return input.length <= 1 ? "*" : `${input[0]}${"*".repeat(Math.min(input.length - 1, 8))}`;
  return `${input[0]}***${input.slice(at)}`;
}
