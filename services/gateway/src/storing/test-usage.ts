import type { CheckCode, ResultRow } from "@svc/domain";
import type { TestUsage } from "@svc/store";
import { utcDay } from "../time";

/** Test-mode usage of one lookup or job: checks and conclusive answers per check, identifiers. */
export function testUsage(checks: readonly CheckCode[], rows: readonly ResultRow[], now: Date): TestUsage {
  const perCheck = new Map(checks.map((check) => [check as string, { check, checks: 0, conclusive: 0 }]));
  for (const row of rows) {
    for (const c of row.checks) {
      const counted = perCheck.get(c.service);
      if (!counted) continue;
      counted.checks += 1;
      if (c.status === "ok") counted.conclusive += 1;
    }
  }
  return { day: utcDay(now), checks: [...perCheck.values()], identifiers: rows.length };
}
