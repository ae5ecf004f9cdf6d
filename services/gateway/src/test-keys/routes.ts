import type { RouteHandler } from "../http/define-route";
import { challengeRoute, createTestKeyRoute, type TestKeyDeps } from "./create-test-key";

export { testKeyNetworkLimit } from "./create-test-key";

/** GET /v1/test-keys/challenge and POST /v1/test-keys (no key needed). */
export function testKeyRoutes(deps: TestKeyDeps): RouteHandler[] {
  return [challengeRoute(deps), createTestKeyRoute(deps)];
}
