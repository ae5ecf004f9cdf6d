export * from "./url-check";
export * from "./signing";
export * from "./secrets";
export * from "./deliver";
export * from "./retry-schedule";
export * from "./settings";
