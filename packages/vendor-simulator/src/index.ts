export * from "./contract";
export * from "./simulator";
