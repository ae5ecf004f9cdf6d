import { disposableEmailBlocklistSet } from "disposable-email-domains-js";

/**
 * Disposable (throwaway) address domains.
 *
 * The list comes from `disposable-email-domains-js`, an npm packaging of the
 * community-maintained disposable-email-domains/disposable-email-domains blocklist
 * (curated, with an allowlist to keep false positives down; about 9,000 domains
 * in 1.26.0). The package is
 * regenerated and published automatically when the upstream list changes, is
 * CC0, has no runtime dependencies and ships types. Rejected alternatives:
 * `disposable-email-domains` (ivolo) is an older, less curated list of 120,000+
 * names (2.4 MB, more false positives) and `mailchecker` is broader still. A
 * built-in list would go stale within weeks. Updating the dependency updates the list.
 *
 * The package's own `isDisposableEmailDomain` rebuilds a Set on every call, so the
 * Set is built once here. A subdomain of a listed domain counts as disposable
 * (upstream's advice: providers hand out `*.domain`).
 */
let blocklist: Set<string> | null = null;

export function isDisposableDomain(domain: string): boolean {
  blocklist ??= disposableEmailBlocklistSet();
  const labels = domain.trim().toLowerCase().replace(/\.$/, "").split(".");
  for (let i = 0; i < labels.length - 1; i += 1) {
    if (blocklist.has(labels.slice(i).join("."))) return true;
  }
  return false;
}
