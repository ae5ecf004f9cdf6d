import { isIP } from "node:net";
import { isDeliverableAddress, type AddressPolicy } from "@svc/domain";

/** Resolves a host name to every address it has (A and AAAA). */
export type Resolve = (hostname: string) => Promise<string[]>;

export class WebhookUrlError extends Error {
  constructor(readonly reason: "invalid" | "not_https" | "credentials" | "unresolvable" | "not_public") {
    super(
      {
        invalid: "The URL is not valid.",
        not_https: "Webhook URLs must use https://.",
        credentials: "Webhook URLs must not contain a user name or password.",
        unresolvable: "The URL's host does not resolve.",
        not_public: "The URL's host must resolve only to public IP addresses.",
      }[reason],
    );
    this.name = "WebhookUrlError";
  }
}

export type CheckedUrl = { url: URL; hostname: string; addresses: string[] };

/**
 * Checks a webhook URL and returns the addresses it may be delivered to. The URL is
 * parsed by the WHATWG parser, which already turns decimal (2130706433), octal
 * (0177.0.0.1) and hex (0x7f.1) hosts into dotted IPv4, so those tricks are caught
 * by the same address check. A host name must resolve, and every address must be
 * public: one private answer among public ones refuses the URL.
 */
export async function checkWebhookUrl(raw: string, resolve: Resolve, policy: AddressPolicy = {}): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError("invalid");
  }
  if (url.protocol !== "https:") throw new WebhookUrlError("not_https");
  if (url.username || url.password) throw new WebhookUrlError("credentials");
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostname) throw new WebhookUrlError("invalid");
  let addresses: string[];
  if (isIP(hostname)) addresses = [hostname];
  else {
    try {
      addresses = await resolve(hostname);
    } catch {
      throw new WebhookUrlError("unresolvable");
    }
  }
  if (addresses.length === 0) throw new WebhookUrlError("unresolvable");
  if (!addresses.every((a) => isDeliverableAddress(a, policy))) throw new WebhookUrlError("not_public");
  return { url, hostname, addresses };
}

/** The system resolver (every address of both families), giving up after `timeoutMs`. */
export function systemResolver(timeoutMs = 5_000): Resolve {
  return async (hostname) => {
    const { lookup } = await import("node:dns/promises");
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("DNS timeout")), timeoutMs);
    });
    try {
      const found = await Promise.race([lookup(hostname, { all: true, verbatim: true }), deadline]);
      return found.map((a) => a.address);
    } finally {
      clearTimeout(timer);
    }
  };
}
