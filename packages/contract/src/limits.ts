import { ONE_MB } from "./routes";

/** The documented limits of API v1 (raising one is additive; lowering one is breaking). */
export const LIMITS = {
  lookupIdentifiers: 100,
  jobIdentifiers: 50_000,
  sandboxJobIdentifiers: 10,
  checksPerRequest: 20,
  lookupIdentifierChecks: 2_000,
  jobIdentifierChecks: 100_000,
  bodyBytes: ONE_MB,
  jobBodyBytes: 4 * ONE_MB,
  maxWaitSeconds: 30,
  defaultLookupWaitSeconds: 10,
  requestsPerSecond: 10,
  burst: 20,
  sandboxRequestsPerMinute: 30,
  sandboxRequestsPerDay: 1_000,
  webhookEndpointsPerMode: 20,
} as const;
