export { startProcess, httpOk, type StartOptions, type RunningProcess, type OutputMode, type Exit } from "./process";
export { startService, programScript, CHECKOUT, READY_LINE, GATEWAY_NODE_FLAGS, SERVICES, type ProgramName, type ServiceName, type ServiceOptions, type RunningService } from "./services";
export { Fleet, type FleetOptions } from "./fleet";
export { seedAccount, type SeedOptions, type SeededAccount } from "./seed";
