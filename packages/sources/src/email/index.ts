export * from "./dns";
export * from "./smtp";
export * from "./session";
export * from "./rcpt-rules";
export * from "./mx-pool";
export * from "./disposable";
export * from "./source";
