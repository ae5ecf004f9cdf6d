export * from "./complete-test-lookup";
export * from "./notify-dispatcher";
export * from "./count-settlements";
export * from "./request-settlement";
