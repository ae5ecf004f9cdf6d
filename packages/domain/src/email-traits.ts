import { run as suggestEmail, POPULAR_DOMAINS } from "@zootools/email-spell-checker";
import ROLE_LOCAL_PARTS from "role-based-email-addresses";

/**
 * What an address says about itself, without asking anyone: a role account, a free
 * mail provider, a likely typo of a popular domain. Pure rules, so live answers
 * (packages/sources' e-mail route) and test mode answer alike. None of them changes
 * `registered` or billing. Decisions and where the lists come from:
 * docs/check-quality.md ("Role accounts, free providers and typos").
 */

/** RFC 2142 mailbox names and the usual no-reply forms: kept even if the npm list dropped one. */
const RFC_2142 = ["info", "marketing", "sales", "support", "abuse", "noc", "security", "postmaster", "hostmaster", "usenet", "news", "webmaster", "www", "uucp", "ftp"];
const ROLES: ReadonlySet<string> = new Set([...ROLE_LOCAL_PARTS, ...RFC_2142, "noreply", "no-reply", "donotreply", "do-not-reply", "mailer-daemon"].map((r) => r.toLowerCase()));

/**
 * Free consumer mailbox providers: anyone can open an address there without owning
 * the domain. Exact domains only (see freeProvider). Our own list, reviewed by hand:
 * the npm `free-email-domains` package rewrites its list from the network on every
 * install and mixes disposable and typo domains (gmial.com) into "free".
 */
export const FREE_PROVIDER_DOMAINS: ReadonlySet<string> = new Set([
  // Google, Microsoft, Yahoo, AOL, Apple
  "gmail.com", "googlemail.com",
  "outlook.com", "outlook.de", "outlook.fr", "outlook.es", "outlook.it", "outlook.jp", "hotmail.com", "hotmail.co.uk", "hotmail.de", "hotmail.fr", "hotmail.es", "hotmail.it", "live.com", "live.co.uk", "live.de", "live.fr", "live.nl", "msn.com",
  "yahoo.com", "yahoo.co.uk", "yahoo.de", "yahoo.fr", "yahoo.es", "yahoo.it", "yahoo.ca", "yahoo.com.au", "yahoo.co.in", "yahoo.co.jp", "yahoo.com.br", "ymail.com", "rocketmail.com",
  "aol.com", "aol.co.uk", "aol.de", "aim.com",
  "icloud.com", "me.com", "mac.com",
  // privacy-minded and independent providers
  "proton.me", "protonmail.com", "protonmail.ch", "pm.me", "tutanota.com", "tutanota.de", "tuta.io", "tuta.com", "zoho.com", "zohomail.com", "mail.com", "email.com", "gmx.com", "gmx.net", "gmx.de", "gmx.at", "gmx.ch", "web.de", "yandex.com", "yandex.ru", "ya.ru", "mail.ru", "inbox.ru", "list.ru", "bk.ru",
  // national providers
  "t-online.de", "freenet.de", "libero.it", "virgilio.it", "orange.fr", "wanadoo.fr", "laposte.net", "free.fr", "sfr.fr", "seznam.cz", "wp.pl", "o2.pl", "interia.pl", "onet.pl", "rediffmail.com", "naver.com", "daum.net", "hanmail.net", "qq.com", "163.com", "126.com", "sina.com", "yeah.net", "uol.com.br", "bol.com.br", "terra.com.br",
]);

/**
 * Misspellings of popular domains that exist and even receive mail (typo squatters),
 * so the "no mail exchanger" rule alone would never correct them. Kept short: only
 * misspellings seen as such, each with its intended domain.
 */
export const KNOWN_MISSPELLINGS: Readonly<Record<string, string>> = {
  "gmial.com": "gmail.com",
  "gmai.com": "gmail.com",
  "gamil.com": "gmail.com",
  "gmal.com": "gmail.com",
  "gnail.com": "gmail.com",
  "gmaill.com": "gmail.com",
  "gmail.co": "gmail.com",
  "gmail.con": "gmail.com",
  "hotmial.com": "hotmail.com",
  "hotmal.com": "hotmail.com",
  "hotmai.com": "hotmail.com",
  "homail.com": "hotmail.com",
  "yaho.com": "yahoo.com",
  "yahooo.com": "yahoo.com",
  "yhoo.com": "yahoo.com",
  "outlok.com": "outlook.com",
  "outllook.com": "outlook.com",
  "iclod.com": "icloud.com",
  "icoud.com": "icloud.com",
};

/** What a typo is compared with: the free providers and the spell checker's popular domains. */
const SUGGESTION_DOMAINS = [...new Set([...FREE_PROVIDER_DOMAINS, ...POPULAR_DOMAINS])];

/**
 * A role account: the local part, lower-cased and without its `+tag`
 * (`Info+2024@` is `info`), is a role name (role-based-email-addresses plus RFC 2142).
 */
export function roleAccount(local: string): boolean {
  const plus = local.indexOf("+");
  const base = (plus < 0 ? local : local.slice(0, plus)).toLowerCase();
  return base !== "" && ROLES.has(base);
}

/**
 * A free mail provider: the domain (lower case, ASCII/punycode as parseEmail gives
 * it) is one of FREE_PROVIDER_DOMAINS exactly. A sub-domain is not (`mail.yahoo.com`
 * hands out no addresses; `x.gmx.net` is someone's host).
 */
export function freeProvider(domain: string): boolean {
  return FREE_PROVIDER_DOMAINS.has(domain.toLowerCase());
}

/**
 * The domain the address was probably meant for, or null. A known misspelling is
 * always corrected; otherwise only a domain without a mail host (`mxFound` false)
 * gets a suggestion, so a real domain that merely looks like a popular one is never
 * "corrected". Internationalised (punycode) domains get none: the lists are ASCII and
 * a lookalike of an ASCII domain is not a typo of it. The answer is a domain, never
 * the whole address.
 */
export function didYouMean(domain: string, mxFound: boolean): string | null {
  const d = domain.toLowerCase();
  const known = KNOWN_MISSPELLINGS[d];
  if (known) return known;
  if (mxFound || d.split(".").some((label) => label.startsWith("xn--"))) return null;
  if (FREE_PROVIDER_DOMAINS.has(d)) return null;
  // Whole domains only: the checker's second-level and TLD rewrites "correct" any
  // company (nomail.example → mail.example, company.con → company.co).
  const suggestion = suggestEmail({ email: `x@${d}`, domains: SUGGESTION_DOMAINS, secondLevelDomains: [], topLevelDomains: [] });
  return suggestion && suggestion.domain !== d ? suggestion.domain : null;
}

/** The three attributes for an address whose local part and domain parseEmail accepted. */
export function emailTraits(local: string, domain: string, mxFound: boolean): { role_account: boolean; free_provider: boolean; did_you_mean: string | null } {
  return { role_account: roleAccount(local), free_provider: freeProvider(domain), did_you_mean: didYouMean(domain, mxFound) };
}
