import { readFileSync } from "node:fs";
import path from "node:path";
import { classifyRcpt, matchRcptRule, providerOf, RCPT_RULES, renderRcptRulesTable, type Provider } from "./rcpt-rules";
import { toReply } from "./smtp";

const DOC = path.resolve(__dirname, "../../../../docs/check-quality.md");

/** The RCPT rules table of docs/check-quality.md, between its markers. */
function docTable(): string {
  const doc = readFileSync(DOC, "utf8");
  const m = /<!-- rcpt-rules:begin -->\n([\s\S]*?)\n<!-- rcpt-rules:end -->/.exec(doc);
  if (!m?.[1]) throw new Error("docs/check-quality.md has no rcpt-rules table");
  return m[1];
}

/** Table rows as cells (a `\|` inside a cell is not a separator). */
function rows(table: string): string[][] {
  return table
    .split("\n")
    .slice(2)
    .map((line) => line.replace(/^\| | \|$/g, "").split(/ (?<!\\)\| /).map((c) => c.replace(/\\\|/g, "|")));
}

describe("RCPT rules: the table in docs/check-quality.md is the classifier's table", () => {
  it("the document shows exactly the rules the code applies, in order (regenerate with renderRcptRulesTable)", () => {
    expect(docTable()).toBe(renderRcptRulesTable());
  });

  const docRows = rows(docTable());

  it("lists every rule once", () => {
    expect(docRows.map((r) => r[0]?.replace(/`/g, ""))).toEqual(RCPT_RULES.map((r) => r.id));
  });

  it.each(docRows.map((r) => [r[0]?.replace(/`/g, "") ?? "", r] as const))("%s: its example reply is matched by that rule with the documented outcome", (id, row) => {
    const provider = row[1] === "any" ? null : (row[1] as Provider);
    const outcome = row[5]?.replace(/\*/g, "");
    const example = [...(row[6] ?? "").matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? "");
    const reply = toReply(example);
    expect(matchRcptRule(reply, provider)?.id).toBe(id);
    expect(classifyRcpt(reply, provider)).toBe(outcome);
  });
});

describe("provider rules", () => {
  it("recognises the providers by their MX host names", () => {
    expect(providerOf("gmail-smtp-in.l.google.com.")).toBe("gmail");
    expect(providerOf("aspmx.l.google.com")).toBe("gmail");
    expect(providerOf("mta7.am0.yahoodns.net")).toBe("yahoo");
    expect(providerOf("hotmail-com.olc.protection.outlook.com")).toBe("outlook.com");
    expect(providerOf("contoso-com.mail.protection.outlook.com")).toBe("microsoft365");
    expect(providerOf("mx.contoso.example")).toBeNull();
    expect(providerOf("google.com.evil.example")).toBeNull();
  });

  it("applies a provider's wording only to that provider", () => {
    const m365 = toReply(["550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT003.eop-nam12.prod.protection.outlook.com]"]);
    expect(classifyRcpt(m365, "microsoft365")).toBe("no_such_user");
    expect(classifyRcpt(m365, null)).toBe("refused");
    const yahoo = toReply(["554 delivery error: dd This user doesn't have a yahoo.com account (nobody@yahoo.com) [0] - mta4013.mail.bf1.yahoo.com"]);
    expect(classifyRcpt(yahoo, "yahoo")).toBe("no_such_user");
    const disabled = toReply(["550-5.2.1 The email account that you tried to reach is disabled.", "550 5.2.1 https://support.google.com/mail/?p=DisabledUser"]);
    expect(classifyRcpt(disabled, "gmail")).toBe("no_such_user");
    expect(classifyRcpt(disabled, null)).toBe("refused");
  });

  it("never reads a policy refusal as a missing mailbox", () => {
    for (const line of [
      "550 5.7.1 <unknown[192.0.2.1]>: Client host rejected: Access denied",
      "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org",
      "550 5.7.606 Access denied, banned sending IP [192.0.2.1]",
      "550 Mailbox unavailable: your IP is blacklisted",
      "553 Relaying denied",
    ]) {
      expect(classifyRcpt(toReply([line]), null)).toBe("refused");
      expect(classifyRcpt(toReply([line]), "microsoft365")).toBe("refused");
    }
  });
});
