import { FleetKeys } from "./fleet-keys";

/**
 * A fleet's place on Redis: the prefix its keys and channels live under, and the
 * key its processes sign and seal their messages with. Every producer, consumer,
 * publisher and waiter takes one, so nothing reads or writes Redis without both.
 */
export type Fleet = { prefix: string; keys: FleetKeys };

/** The fleet described by a service's configuration (validated at start-up). */
export function fleetOf(config: { REDIS_PREFIX: string; FLEET_MESSAGE_KEY: string; FLEET_MESSAGE_KEY_ACCEPT?: string }): Fleet {
  return { prefix: config.REDIS_PREFIX, keys: new FleetKeys(config.FLEET_MESSAGE_KEY, config.FLEET_MESSAGE_KEY_ACCEPT) };
}
