/**
 * @svc/mcp: an MCP server for the phone and e-mail validation API, on the official
 * MCP TypeScript SDK and @svc/sdk. Run it with the `svc-mcp` binary; these exports
 * are for embedding it (another transport, tests).
 */
export { createMcpServer, type ServerDeps } from "./server.js";
export { startHttp, type HttpOptions, type RunningHttp } from "./http.js";
export { decide, readApproval, sendSettling, isDefinitiveFailure, boundArguments, confirmationReasons, type Approval, type Assessment, type ConfirmationFields, type Decision } from "./confirm.js";
export { ConfirmationBook, canonicalJson, type Ticket, type TokenCheck, type TokenHold, type TokenProblem } from "./confirmation-token.js";
export {
  loadConfig,
  keyKindOf,
  ALLOW_INSECURE_HTTP_ENV,
  CONFIRM_ABOVE_ENV,
  CONFIRM_NUMBERS_ABOVE,
  CONFIRM_TTL_ENV,
  DEFAULT_CONFIRM_ABOVE,
  DEFAULT_CONFIRM_TTL_SECONDS,
  HTTP_TOKEN_ENV,
  LOG_LEVEL_ENV,
  type McpConfig,
  type KeyKind,
} from "./config.js";
export { createLog, createRedactor, type Log } from "./log.js";
export { MCP_VERSION } from "./version.js";
