export type { RecordedCall } from "./types";
export { RECORDED_CALLS } from "./recorded";
export { codeSamples, MCP_TOOL_OF, type CodeSample } from "./samples";
export { applyExamples } from "./apply";
