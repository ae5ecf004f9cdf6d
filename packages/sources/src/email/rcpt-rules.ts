import type { SmtpReply } from "./smtp";

/**
 * What a RCPT TO reply says about the address, as one ordered table: the first
 * rule that matches decides. docs/check-quality.md shows this table (rendered by
 * `renderRcptRulesTable`, checked by rcpt-rules.test.ts), so the documentation and
 * the classifier cannot drift apart.
 *
 * Outcomes:
 * - `accepted`: the server would take mail for the address (catch-all probe decides
 *   whether that means "exists").
 * - `no_such_user`: the address does not exist (conclusive, billed).
 * - `temporary`: try later (greylisting, rate limits, over quota); says nothing.
 * - `refused`: a refusal that says nothing reliable about the mailbox (policy,
 *   blocklists, our sender address, our IP's reputation).
 *
 * Provider rules come first and apply only when the domain's highest-priority MX
 * host belongs to the provider (`providerOf`); what they know is how that provider
 * words "no such user" (learned from Reacher, reacherhq/check-if-email-exists,
 * `core/src/smtp/parser.rs` and its `outlook`/`gmail`/`yahoo` modules, and from
 * the providers' published error references).
 */
export type RcptOutcome = "accepted" | "no_such_user" | "temporary" | "refused";

export type Provider = "gmail" | "yahoo" | "outlook.com" | "microsoft365";

/** The mail provider behind an MX host name, from the names the providers publish for their inbound servers. */
export function providerOf(mxHost: string): Provider | null {
  const host = mxHost.toLowerCase().replace(/\.$/, "");
  if (host === "google.com" || host.endsWith(".google.com") || host.endsWith(".googlemail.com")) return "gmail";
  if (host.endsWith(".yahoodns.net")) return "yahoo";
  // Outlook.com/Hotmail (consumer): hotmail-com.olc.protection.outlook.com, eur.olc.protection.outlook.com.
  if (host.endsWith(".olc.protection.outlook.com")) return "outlook.com";
  // Microsoft 365 tenants (business): <tenant>.mail.protection.outlook.com (and .mx.microsoft, the 2024 DNSSEC names).
  if (host.endsWith(".mail.protection.outlook.com") || host.endsWith(".mx.microsoft")) return "microsoft365";
  return null;
}

/** Reasons that make a refusal say nothing about the mailbox: policy, reputation, our sender, a disabled or full box. */
export const POLICY_WORDS =
  /spam|block|black ?list|\blisted (?:at|on|by)\b|\brbl\b|dnsbl|reputation|policy|relay|denied|not permitted|prohibited|banned|abuse|\bspf\b|dmarc|dkim|authenticat|starttls|\btls\b|\brate\b|too many|disabled|inactive|suspended|quota|\bfull\b|storage/i;

type CodeMatch = "2xx" | "4xx" | "5xx" | readonly number[];
/** "any", "none" (no enhanced code sent), an exact code ("5.4.1") or a class wildcard ("5.1.*"). */
type EnhancedMatch = "any" | "none" | string;

export type RcptRule = {
  id: string;
  provider: Provider | null;
  code: CodeMatch;
  enhanced: EnhancedMatch;
  /** Must match the reply text (all lines joined by a space), case-insensitive. */
  text: RegExp | null;
  /** The text must not name a policy reason (POLICY_WORDS). */
  policyFree: boolean;
  outcome: RcptOutcome;
  /** A reply the provider actually sends; lines separated by "\n". The unit test classifies each one. */
  example: string;
  why: string;
};

export const RCPT_RULES: readonly RcptRule[] = [
  {
    id: "gmail-rate-limited-user",
    provider: "gmail",
    code: [450],
    enhanced: "4.2.1",
    text: /receiving mail at a rate/i,
    policyFree: false,
    outcome: "accepted",
    example: "450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n450-4.2.1 prevents additional messages from being delivered. Please resend your\n450 4.2.1 message at a later point. https://support.google.com/mail/?p=ReceivingRate",
    why: "Gmail says this only about a mailbox that exists (Reacher counts it deliverable); the catch-all probe still decides.",
  },
  {
    id: "gmail-no-such-user",
    provider: "gmail",
    code: [550],
    enhanced: "5.1.1",
    text: /does not exist/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550-5.1.1 double-checking the recipient's email address for typos or\n550-5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser\n550 5.1.1 a1si123 - gsmtp",
    why: "Multi-line 5.1.1; every line carries the enhanced code.",
  },
  {
    id: "gmail-disabled",
    provider: "gmail",
    code: [550, 554],
    enhanced: "5.2.1",
    text: /account that you tried to reach is disabled/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "550-5.2.1 The email account that you tried to reach is disabled. Learn more at\n550 5.2.1 https://support.google.com/mail/?p=DisabledUser a1si123 - gsmtp",
    why: "A closed Google account: no mail will ever be delivered (Reacher: disabled, not deliverable).",
  },
  {
    id: "gmail-over-quota",
    provider: "gmail",
    code: [452, 552],
    enhanced: "any",
    text: /over quota|out of storage/i,
    policyFree: false,
    outcome: "temporary",
    example: "452-4.2.2 The email account that you tried to reach is over quota. Please direct\n452 4.2.2 the recipient to https://support.google.com/mail/?p=OverQuotaTemp a1si123 - gsmtp",
    why: "The box exists but is full; a full box may empty, so no verdict (free).",
  },
  {
    id: "yahoo-no-account",
    provider: "yahoo",
    code: [554],
    enhanced: "any",
    text: /doesn.?t have an? \S+ account/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "554 delivery error: dd This user doesn't have a yahoo.com account (nobody@yahoo.com) [0] - mta4013.mail.bf1.yahoo.com",
    why: "Yahoo (and AOL, same servers) answer 554 without an enhanced code for unknown users.",
  },
  {
    id: "yahoo-disabled",
    provider: "yahoo",
    code: [554],
    enhanced: "any",
    text: /disabled or discontinued/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "554 delivery error: dd Sorry your message to nobody@yahoo.com cannot be delivered. This account has been disabled or discontinued [#102]. - mta1001.mail.gq1.yahoo.com",
    why: "A closed Yahoo account (Reacher: disabled).",
  },
  {
    id: "yahoo-deferred",
    provider: "yahoo",
    code: [421, 451],
    enhanced: "any",
    text: /\[TS0\d\]|temporarily deferred/i,
    policyFree: false,
    outcome: "temporary",
    example: "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes",
    why: "Yahoo throttles our address; the 421 also backs the probe off this server.",
  },
  {
    id: "outlook-com-mailbox-unavailable",
    provider: "outlook.com",
    code: [550],
    enhanced: "5.5.0",
    text: /mailbox unavailable/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [DM6NAM12FT035.eop-nam12.prod.protection.outlook.com]",
    why: "Outlook.com/Hotmail's answer for an address with no account.",
  },
  {
    id: "m365-directory-blocking",
    provider: "microsoft365",
    code: [550],
    enhanced: "5.4.1",
    text: /recipient address rejected: access denied/i,
    policyFree: false,
    outcome: "no_such_user",
    example: "550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT003.eop-nam12.prod.protection.outlook.com]",
    why: "Directory-Based Edge Blocking: Exchange Online refuses recipients not in the tenant's directory (Microsoft's NDR reference for 5.4.1).",
  },
  {
    id: "m365-rate-limited",
    provider: "microsoft365",
    code: "4xx",
    enhanced: "4.7.*",
    text: null,
    policyFree: false,
    outcome: "temporary",
    example: "451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com",
    why: "Exchange Online throttling our address.",
  },
  {
    id: "accepted",
    provider: null,
    code: "2xx",
    enhanced: "any",
    text: null,
    policyFree: false,
    outcome: "accepted",
    example: "250 2.1.5 Recipient OK",
    why: "250, 251 (will forward) and 252 (cannot verify, will accept).",
  },
  {
    id: "temporary",
    provider: null,
    code: "4xx",
    enhanced: "any",
    text: null,
    policyFree: false,
    outcome: "temporary",
    example: "451 4.7.1 <alice@grey.example>: Recipient address rejected: Greylisted, try again later",
    why: "Greylisting, rate limits, mailbox busy; 452 4.5.3 too many recipients is re-asked in a fresh transaction first.",
  },
  {
    id: "sender-rejected",
    provider: null,
    code: "5xx",
    enhanced: "5.1.7",
    text: null,
    policyFree: false,
    outcome: "refused",
    example: "553 5.1.7 The sender address <probe@validation.example> is not a valid RFC 5321 address",
    why: "5.1.7 and 5.1.8 are about our MAIL FROM, not the recipient.",
  },
  {
    id: "sender-domain-rejected",
    provider: null,
    code: "5xx",
    enhanced: "5.1.8",
    text: null,
    policyFree: false,
    outcome: "refused",
    example: "553 5.1.8 <alice@corp.example>: Sender address rejected: Domain not found",
    why: "Our sender's domain, not the recipient.",
  },
  {
    id: "bad-mailbox",
    provider: null,
    code: "5xx",
    enhanced: "5.1.*",
    text: null,
    policyFree: false,
    outcome: "no_such_user",
    example: "550 5.1.1 <bob@corp.example>: Recipient address rejected: User unknown in virtual mailbox table",
    why: "RFC 3463 X.1.x addressing status: 5.1.1 bad mailbox, 5.1.2 bad domain, 5.1.3 bad syntax, 5.1.6 moved, 5.1.10 null MX.",
  },
  {
    id: "mailbox-unavailable",
    provider: null,
    code: [550],
    enhanced: "5.5.0",
    text: /mailbox (?:is )?unavailable/i,
    policyFree: true,
    outcome: "no_such_user",
    example: "550 5.5.0 Requested action not taken: mailbox unavailable",
    why: "Exchange and others use 5.5.0 with RFC 5321's 550 text for unknown users (Reacher: invalid).",
  },
  {
    id: "unknown-user-text",
    provider: null,
    code: "5xx",
    enhanced: "5.0.0",
    text: /user unknown|unknown user|no such (?:user|mailbox|recipient)|does not exist|unknown recipient|recipient unknown|mailbox not found|invalid (?:mailbox|recipient)/i,
    policyFree: true,
    outcome: "no_such_user",
    example: "550 5.0.0 <bob@corp.example>... User unknown",
    why: "Sendmail-style generic 5.0.0 with a text that says unknown user.",
  },
  {
    id: "unknown-user-plain",
    provider: null,
    code: "5xx",
    enhanced: "none",
    text: /user unknown|unknown user|no such (?:user|mailbox|recipient)|does not exist|unknown recipient|recipient unknown|mailbox not found|invalid (?:mailbox|recipient)/i,
    policyFree: true,
    outcome: "no_such_user",
    example: "554 Unknown recipient <bob@corp.example>",
    why: "The same texts on any 5xx without an enhanced code (554 included).",
  },
  {
    id: "plain-5xx-unknown-user",
    provider: null,
    code: [550, 551, 553],
    enhanced: "none",
    text: null,
    policyFree: true,
    outcome: "no_such_user",
    example: "550 Requested action not taken: mailbox unavailable",
    why: "Servers without enhanced codes (RFC 5321: 550 mailbox unavailable, 551 user not local, 553 mailbox name not allowed) unless the text names a policy reason.",
  },
  {
    id: "refused",
    provider: null,
    code: "5xx",
    enhanced: "any",
    text: null,
    policyFree: false,
    outcome: "refused",
    example: "550 5.7.1 Service unavailable; client host [192.0.2.1] blocked using zen.spamhaus.org",
    why: "Every other 5xx: policy (5.7.x), mailbox full or disabled (5.2.x), routing (5.4.x), protocol (5.5.x), blocklists.",
  },
];

function codeMatches(match: CodeMatch, code: number): boolean {
  if (match === "2xx") return code >= 200 && code < 300;
  if (match === "4xx") return code >= 400 && code < 500;
  if (match === "5xx") return code >= 500 && code < 600;
  return match.includes(code);
}

function enhancedMatches(match: EnhancedMatch, enhanced: string | null): boolean {
  if (match === "any") return true;
  if (match === "none") return enhanced === null;
  if (enhanced === null) return false;
  if (match.endsWith(".*")) return enhanced.startsWith(match.slice(0, -1));
  return enhanced === match;
}

/** The first rule that matches the reply, for the given provider (null: not a known provider); null for non-4xx/5xx oddities. */
export function matchRcptRule(reply: SmtpReply, provider: Provider | null = null): RcptRule | null {
  const text = reply.lines.join(" ");
  for (const rule of RCPT_RULES) {
    if (rule.provider !== null && rule.provider !== provider) continue;
    if (!codeMatches(rule.code, reply.code)) continue;
    if (!enhancedMatches(rule.enhanced, reply.enhanced)) continue;
    if (rule.text && !rule.text.test(text)) continue;
    if (rule.policyFree && POLICY_WORDS.test(text)) continue;
    return rule;
  }
  return null;
}

/** The outcome of a RCPT reply (see RCPT_RULES); a reply no rule covers (1xx, 3xx) is `refused`. */
export function classifyRcpt(reply: SmtpReply, provider: Provider | null = null): RcptOutcome {
  return matchRcptRule(reply, provider)?.outcome ?? "refused";
}

/** 452 / 4.5.3: the server takes no more recipients in this transaction (RFC 5321 4.5.3.1.10); ask again in a new one. */
export function isTooManyRecipients(reply: SmtpReply): boolean {
  return reply.enhanced === "4.5.3" || (reply.code === 452 && /too many recipients/i.test(reply.lines.join(" ")));
}

/** The Markdown table in docs/check-quality.md, generated from RCPT_RULES. */
export function renderRcptRulesTable(): string {
  const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, "<br>");
  const code = (c: CodeMatch) => (typeof c === "string" ? c : c.join(", "));
  const rows = RCPT_RULES.map((r) =>
    [
      `\`${r.id}\``,
      r.provider ?? "any",
      code(r.code),
      r.enhanced,
      [r.text ? `\`${r.text.source}\`` : "", r.policyFree ? "no policy reason" : ""].filter(Boolean).join("; ") || "any",
      `**${r.outcome}**`,
      `\`${r.example.split("\n").join("` `")}\``,
      r.why,
    ]
      .map(cell)
      .join(" | "),
  );
  return ["| Rule | Provider | Code | Enhanced | Text | Outcome | Example reply | Why |", "|---|---|---|---|---|---|---|---|", ...rows.map((r) => `| ${r} |`)].join("\n");
}
