export * from "./worker-service";
export * from "./lease";
export * from "./service-ops";
export * from "./dependencies";
