import type { SettlementResult } from "@svc/store";
import { metrics } from "@svc/metrics";

/**
 * Counts settlements in the process that ran them: the billing-ledger's, and a
 * job's own, run in the transaction that finished it (the check-worker's; the
 * gateway settles nothing). The same series everywhere, so the fleet's settled money
 * adds up whichever process settled it.
 */
export function countSettlements(results: readonly SettlementResult[]): void {
  for (const r of results) {
    metrics.settlements().inc({ outcome: r.closed ? "closed" : r.settledPairs > 0 ? "partial" : "nothing" });
    if (r.chargedMicros > 0n) metrics.settledMicros().inc({ kind: "charged" }, Number(r.chargedMicros));
    if (r.releasedMicros > 0n) metrics.settledMicros().inc({ kind: "released" }, Number(r.releasedMicros));
  }
}
