export type ParsedEmail = { valid: true; email: string; domain: string; local: string } | { valid: false };

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TLD = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

/**
 * Practical address syntax (RFC 5321 dot-atom, no quoted local parts or IP
 * literals): local part up to 64, whole address up to 254 characters. The domain
 * is lower-cased; the local part is kept as given.
 */
export function parseEmail(input: string): ParsedEmail {
  const trimmed = input.trim();
  if (trimmed.length > 254) return { valid: false };
  const at = trimmed.lastIndexOf("@");
  if (at <= 0 || at === trimmed.length - 1) return { valid: false };
  const local = trimmed.slice(0, at);
  const domain = trimmed.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL.test(local)) return { valid: false };
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels[labels.length - 1] as string)) {
    return { valid: false };
  }
  return { valid: true, email: `${local}@${domain}`, domain, local };
}
