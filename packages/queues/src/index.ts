export * from "./catalog";
export * from "./connection";
export * from "./producer";
export * from "./consumer";
export * from "./notifier";
export * from "./events";
export * from "./metrics";
export * from "./inspect";
