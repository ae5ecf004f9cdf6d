export * from "./complete-test-lookup";
export * from "./worker-service";
export * from "./notify-dispatcher";
export * from "./lease";
export * from "./service-ops";
export * from "./dependencies";
export * from "./count-settlements";
export * from "./request-settlement";
