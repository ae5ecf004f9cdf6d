// @svc/queues: queues and completion notices on Redis.

// Queues: names, the job catalog, job ids, producer, consumer, and what rides on them.
export * from "./catalog";
export * from "./job-ids";
export * from "./producer";
export * from "./consumer";
export * from "./events";
export * from "./metrics";
export * from "./inspect";

// Completion notices over sharded pub/sub (src/notices/).
export * from "./notices";

// Shared by both: connections, key names, the fleet (prefix and key) and its message keys, Redis users.
export * from "./connection";
export * from "./keys";
export * from "./fleet";
export { FleetKeys, canonicalJson } from "./fleet-keys";
export * from "./acl";
