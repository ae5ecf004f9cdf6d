export * from "./types";
export * from "./breaker";
export * from "./runner";
export * from "./availability";
export * from "./vendor-http";
export * from "./spam-reports";
export * from "./carrier-offline";
export * from "./email";
