import { didYouMean, emailTraits, FREE_PROVIDER_DOMAINS, freeProvider, KNOWN_MISSPELLINGS, roleAccount } from "./email-traits";

describe("roleAccount", () => {
  it("knows RFC 2142 mailboxes and the common role names", () => {
    for (const local of ["info", "sales", "support", "postmaster", "hostmaster", "abuse", "webmaster", "noreply", "no-reply", "billing", "careers", "hello"]) {
      expect([local, roleAccount(local)]).toEqual([local, true]);
    }
  });

  it("does not call a person's name a role", () => {
    for (const local of ["alice", "bob", "jane.doe", "j.smith", "carol99", "infos.person"]) expect([local, roleAccount(local)]).toEqual([local, false]);
  });

  it("ignores case and a +tag: info+x@ is still info", () => {
    expect(roleAccount("Info")).toBe(true);
    expect(roleAccount("info+newsletter")).toBe(true);
    expect(roleAccount("SALES+eu+2024")).toBe(true);
    expect(roleAccount("alice+info")).toBe(false);
    expect(roleAccount("+info")).toBe(false);
  });
});

describe("freeProvider", () => {
  it("knows the big free mailbox providers", () => {
    for (const domain of ["gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "yahoo.com", "icloud.com", "proton.me", "gmx.de", "web.de", "mail.ru", "qq.com"]) {
      expect([domain, freeProvider(domain)]).toEqual([domain, true]);
    }
  });

  it("is an exact match: sub-domains, companies and misspellings are not free providers", () => {
    for (const domain of ["mail.yahoo.com", "x.gmx.net", "google.com", "corp.example", "gmial.com", "example.com", "mailinator.com"]) {
      expect([domain, freeProvider(domain)]).toEqual([domain, false]);
    }
    expect(freeProvider("GMAIL.com")).toBe(true);
  });

  it("holds only lower-case ASCII domains, none of them a known misspelling", () => {
    for (const domain of FREE_PROVIDER_DOMAINS) expect(domain).toMatch(/^[a-z0-9.-]+\.[a-z]{2,}$/);
    for (const typo of Object.keys(KNOWN_MISSPELLINGS)) expect(FREE_PROVIDER_DOMAINS.has(typo)).toBe(false);
    for (const meant of Object.values(KNOWN_MISSPELLINGS)) expect(FREE_PROVIDER_DOMAINS.has(meant)).toBe(true);
  });
});

describe("didYouMean", () => {
  it("corrects a known misspelling even when it receives mail", () => {
    expect(didYouMean("gmial.com", true)).toBe("gmail.com");
    expect(didYouMean("hotmial.com", true)).toBe("hotmail.com");
    expect(didYouMean("GMIAL.COM", false)).toBe("gmail.com");
  });

  it("suggests a popular domain for a domain that receives no mail", () => {
    expect(didYouMean("gmaik.com", false)).toBe("gmail.com");
    expect(didYouMean("outlook.cm", false)).toBe("outlook.com");
    expect(didYouMean("yahoo.co", false)).toBe("yahoo.com");
    expect(didYouMean("gmx.ne", false)).toBe("gmx.net");
  });

  it("never corrects a domain with a mail host that is not a known misspelling", () => {
    expect(didYouMean("gmaik.com", true)).toBeNull();
    expect(didYouMean("outlook.cm", true)).toBeNull();
  });

  it("gives nothing for a correct domain, an unrelated one or a company's second-level/TLD typo", () => {
    for (const domain of ["gmail.com", "corp.example", "nomail.example", "company.con", "mycompany.com", "example.com"]) {
      expect([domain, didYouMean(domain, false)]).toEqual([domain, null]);
    }
  });

  it("gives nothing for an internationalised (punycode) domain", () => {
    // "gmаil.com" with a Cyrillic а: a lookalike, not a typo.
    expect(didYouMean("xn--gmil-63d.com", false)).toBeNull();
  });
});

describe("emailTraits", () => {
  it("answers the three attributes together", () => {
    expect(emailTraits("info+x", "gmial.com", true)).toEqual({ role_account: true, free_provider: false, did_you_mean: "gmail.com" });
    expect(emailTraits("alice", "gmail.com", true)).toEqual({ role_account: false, free_provider: true, did_you_mean: null });
  });
});
