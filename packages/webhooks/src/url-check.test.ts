import { checkWebhookUrl, WebhookUrlError, type Resolve } from "./url-check";

/** A resolver that never leaves the process: names map to fixed answers. */
const resolver =
  (table: Record<string, string[]>): Resolve =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    return found;
  };

const dns = resolver({
  "hooks.example.com": ["93.184.215.14"],
  "dual.example.com": ["93.184.215.14", "2606:4700:4700::1111"],
  "mixed.example.com": ["93.184.215.14", "10.0.0.7"],
  "internal.example.com": ["192.168.0.10"],
  "rebind.example.com": ["127.0.0.1"],
  "empty.example.com": [],
});

async function reason(url: string): Promise<string> {
  try {
    await checkWebhookUrl(url, dns);
    return "accepted";
  } catch (err) {
    if (err instanceof WebhookUrlError) return err.reason;
    throw err;
  }
}

describe("webhook URL check", () => {
  test("a public https URL is accepted with every address it resolves to", async () => {
    const checked = await checkWebhookUrl("https://dual.example.com:8443/hooks?x=1", dns);
    expect(checked.hostname).toBe("dual.example.com");
    expect(checked.addresses).toEqual(["93.184.215.14", "2606:4700:4700::1111"]);
    expect(checked.url.port).toBe("8443");
  });

  test.each([
    ["http://hooks.example.com/", "not_https"],
    ["ftp://hooks.example.com/", "not_https"],
    ["hooks.example.com/path", "invalid"],
    ["https://", "invalid"],
    ["https://user:pw@hooks.example.com/", "credentials"],
    ["https://nowhere.example.com/", "unresolvable"],
    ["https://empty.example.com/", "unresolvable"],
    ["https://internal.example.com/", "not_public"],
    ["https://rebind.example.com/", "not_public"],
    ["https://mixed.example.com/", "not_public"],
  ])("%s → %s", async (url, expected) => {
    expect(await reason(url)).toBe(expected);
  });

  // The WHATWG parser normalises numeric hosts to dotted IPv4 before the check.
  test.each([
    ["https://2130706433/", "decimal 127.0.0.1"],
    ["https://0177.0.0.1/", "octal 127.0.0.1"],
    ["https://0x7f.0x0.0x0.0x1/", "hex 127.0.0.1"],
    ["https://0x7f000001/", "hex integer 127.0.0.1"],
    ["https://127.1/", "short form 127.0.0.1"],
    ["https://0xa9fea9fe/", "hex 169.254.169.254"],
    ["https://3232235777/", "decimal 192.168.1.1"],
    ["https://012.0.0.1/", "octal 10.0.0.1"],
    ["https://[::ffff:127.0.0.1]/", "IPv4-mapped literal"],
    ["https://[::ffff:7f00:1]/", "IPv4-mapped hex literal"],
    ["https://[::1]/", "IPv6 loopback literal"],
    ["https://[fe80::1%25eth0]/", "scoped link-local"],
    ["https://0/", "0.0.0.0"],
  ])("numeric host trick %s (%s) is refused", async (url) => {
    expect(["not_public", "invalid"]).toContain(await reason(url));
    expect(await reason(url)).not.toBe("accepted");
  });

  test("a public numeric host is accepted without resolving", async () => {
    const never: Resolve = async () => {
      throw new Error("must not resolve");
    };
    expect((await checkWebhookUrl("https://93.184.215.14/h", never)).addresses).toEqual(["93.184.215.14"]);
    expect((await checkWebhookUrl("https://1572394766/h", never)).addresses).toEqual(["93.184.215.14"]);
  });

  test("the error message never echoes the URL", async () => {
    const err = await checkWebhookUrl("https://internal.example.com/secret-path", dns).catch((e: Error) => e);
    expect(String((err as Error).message)).not.toMatch(/internal|secret|192\.168/);
  });
});
