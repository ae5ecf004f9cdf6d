// Completion notices: Redis sharded pub/sub telling a waiting request that its lookup
// or job is done (./notifier.ts), sealed with the fleet's key (./seal.ts).
export * from "./notifier";
export { NOTICE_MAX_AGE_MS, noticeChannels, openNotice, routeTags, sealNotice } from "./seal";
