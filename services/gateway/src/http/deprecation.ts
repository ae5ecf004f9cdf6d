import type { Response } from "express";
import type { Deprecation } from "@svc/contract";

/**
 * Headers for a deprecated operation: `Deprecation: @<unix seconds>` (RFC 9745),
 * `Sunset: <HTTP date>` (RFC 8594) and a `Link` to the changelog entry.
 */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(d.deprecatedAt.getTime() / 1000)}`,
    Sunset: d.sunset.toUTCString(),
    Link: `<${d.changelogUrl}>; rel="deprecation"; type="text/html"`,
  };
}

export function applyDeprecation(res: Response, d: Deprecation | undefined): void {
  if (!d) return;
  for (const [k, v] of Object.entries(deprecationHeaders(d))) res.setHeader(k, v);
}
