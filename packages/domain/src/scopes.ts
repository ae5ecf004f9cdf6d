import type { KeyMode } from "./api-key";

export const SCOPES = ["lookup:write", "jobs:write", "jobs:read", "jobs:read_all", "account:read", "webhooks:manage"] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Test and live keys without an explicit list: everything but `webhooks:manage`, which is granted on purpose. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== "webhooks:manage");

/** The public sandbox key never has `webhooks:manage` or `jobs:read_all`. */
export const SANDBOX_SCOPES: readonly Scope[] = ["lookup:write", "jobs:write", "jobs:read", "account:read"];

/**
 * Scopes a new key gets. Agent keys have exactly the scopes they were issued with,
 * so they must be given a list.
 */
export function scopesForNewKey(mode: KeyMode, requested: readonly Scope[] | undefined): Scope[] {
  if (mode === "agent") {
    if (!requested || requested.length === 0) throw new Error("agent keys need an explicit --scopes list");
    return [...new Set(requested)];
  }
  return requested && requested.length > 0 ? [...new Set(requested)] : [...DEFAULT_SCOPES];
}
