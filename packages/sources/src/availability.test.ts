import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { createRedis, waitForRedis, type RedisClient } from "@svc/queues";
import { createTestEnv, type TestEnv } from "../../../tests/support/env";
import { redisModes } from "../../../tests/support/redis-modes";
import { checksWithAllRoutesDown } from "./availability";
import { CheckRunner } from "./runner";
import type { Identifier } from "./types";
import { VendorHttpSource } from "./vendor-http";

/**
 * What the check-workers advertise (routes per check in one MULTI, breaker states) and
 * what the gateway reads back (MGETs), on one Redis and on a Redis Cluster: the keys
 * of one prefix share a hash tag, so neither command is refused as cross-slot.
 */
const id: Identifier = { e164: "+16465551000", email: null, domain: null, country: "US", numberType: undefined };

let env: TestEnv;
let sim: Simulator;
beforeAll(async () => {
  env = await createTestEnv();
  sim = await startSimulator();
});
afterAll(async () => sim?.close());

describe.each(redisModes())("route availability on %s", (_mode, urlOf) => {
  let redis: RedisClient;
  beforeAll(async () => {
    redis = createRedis(urlOf(), "producer", "availability-test");
    await waitForRedis(redis);
  });
  afterAll(async () => redis?.quit());

  it("reports a check down once every route's breaker is open, and a check with no route at all", async () => {
    const prefix = `${env.redisPrefix}:${_mode === "one Redis" ? "single" : "cluster"}`;
    const runner = new CheckRunner(redis, prefix)
      .add(new VendorHttpSource("primary", "whatsapp", sim.url, "sim-key"), { timeoutMs: 300, concurrency: 2, retries: 0 })
      .add(new VendorHttpSource("backup", "whatsapp", sim.url, "sim-key"), { timeoutMs: 300, concurrency: 2, retries: 0 })
      .add(new VendorHttpSource("signal-primary", "signal.registered", sim.url, "sim-key"), { timeoutMs: 300, concurrency: 2, retries: 0 })
      .declare("carrier");
    await runner.advertise();
    // Not advertised (email) is not reported; no route (carrier) is.
    expect(await checksWithAllRoutesDown(redis, prefix, ["whatsapp", "signal.registered", "carrier", "email"])).toEqual(["carrier"]);

    sim.settings.outage = true;
    try {
      // Five failures in a row open a route's breaker (written to Redis for every replica).
      for (let i = 0; i < 5; i += 1) await runner.run("whatsapp", id);
    } finally {
      sim.settings.outage = false;
    }
    let down: string[] = [];
    for (let i = 0; i < 50 && down.length < 2; i += 1) {
      down = await checksWithAllRoutesDown(redis, prefix, ["whatsapp", "signal.registered", "carrier"]);
      if (down.length < 2) await new Promise((r) => setTimeout(r, 20)); // the breaker's write is fire-and-forget
    }
    expect(down.sort()).toEqual(["carrier", "whatsapp"]);
  });
});
