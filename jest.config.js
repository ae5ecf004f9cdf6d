/**
 * One jest run for the whole repository: unit tests next to the code they test
 * (packages/*, services/*), fleet tests under tests/. Everything talks to the
 * real Postgres and Redis; each test file gets its own database (cloned from a
 * migrated template) and its own Redis key prefix.
 */
const swc = [
  "@swc/jest",
  {
    jsc: { target: "es2022", parser: { syntax: "typescript" } },
    module: { type: "commonjs" },
    sourceMaps: "inline",
  },
];

module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/packages", "<rootDir>/services", "<rootDir>/tests"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/dist/"],
  transform: { "^.+\\.ts$": swc },
  moduleNameMapper: {
    "^@svc/(config|process|metrics|domain|csv|contract|store|queues|flows|service-runner|admin|sources|vendor-simulator|webhooks|sdk|fleet-harness)$": "<rootDir>/packages/$1/src",
  },
  globalSetup: "<rootDir>/tests/support/global-setup.ts",
  globalTeardown: "<rootDir>/tests/support/global-teardown.ts",
  testTimeout: 30_000,
  maxWorkers: 2,
};
