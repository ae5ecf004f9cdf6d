export { loadConfig, ConfigError } from "./load-config";
export { loadDotEnv } from "./dot-env";
export { commonEnv, workerEnv, opsEnv, type CommonEnv } from "./common-env";
export { Type, type Static, type TObject } from "@sinclair/typebox";
export { StringEnum } from "./string-enum";
export { parseRedisUrl, redisAddresses, redisPassword, type RedisTarget } from "./redis-url";
