/**
 * A renewal: the lease this attempt last wrote (`held`), the time it is sent, and the
 * new end. Shared by job chunks and live lookups; its own module, importing no other
 * store file, so neither of them imports the other for it.
 */
export type LeaseRenewal = { token: number; held: Date; now: Date; until: Date };
