export * from "./dns";
export * from "./smtp";
export * from "./disposable";
export * from "./source";
