import type { Handlers } from "../http/routes";
import { challengeHandler, createTestKeyHandler, type TestKeyDeps } from "./create-test-key";

export { testKeyNetworkLimit } from "./create-test-key";

/** GET /v1/test-keys/challenge and POST /v1/test-keys (no key needed). */
export function testKeyRoutes(deps: TestKeyDeps): Handlers {
  return { getTestKeyChallenge: challengeHandler(deps), createTestKey: createTestKeyHandler(deps) };
}
