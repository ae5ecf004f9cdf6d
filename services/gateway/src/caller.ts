import type { KeyMode, Scope } from "@svc/domain";

/**
 * The authenticated caller: the API key's account, mode, scopes and limits, as
 * http/authenticate.ts resolves them. Plain data, so planning and pricing take it
 * without knowing where it came from.
 */
export type Caller = {
  keyId: string;
  accountId: string;
  mode: KeyMode;
  livemode: boolean;
  isSandbox: boolean;
  scopes: Scope[];
  realtimeEnabled: boolean;
  retentionDays: number;
  dailySpendCapMicros: bigint | null;
};
