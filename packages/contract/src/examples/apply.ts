import { ROUTES } from "../routes";
import { RECORDED_CALLS } from "./recorded";
import { codeSamples } from "./samples";

type Json = Record<string, any>;

/** OpenAPI's path template of an operation (`/v1/jobs/{id}`), by operationId. */
const TEMPLATE = new Map(ROUTES.map((r) => [r.operationId, r.path]));

/**
 * Puts the recorded examples (what a test-mode gateway answered; ./recorded.ts) into the
 * document: the request body and the answer of each status an operation was called
 * with, and the code samples of its first successful call as `x-codeSamples` (the key
 * Scalar, Redocly and others render as the operation's samples).
 */
export function applyExamples(paths: Json, baseUrl: string): void {
  const seen = new Set<string>();
  for (const call of RECORDED_CALLS) {
    const operation = paths[TEMPLATE.get(call.operationId) ?? ""]?.[call.method] as Json | undefined;
    if (!operation) continue;
    const ok = call.status < 300;
    const requestMedia = operation.requestBody?.content?.["application/json"];
    if (ok && call.body !== undefined && requestMedia && requestMedia.example === undefined) requestMedia.example = call.body;
    const responseMedia = operation.responses?.[String(call.status)]?.content?.[call.contentType ?? "application/json"];
    if (responseMedia && responseMedia.example === undefined && call.response !== null) responseMedia.example = call.response;
    if (ok && !seen.has(call.operationId)) {
      seen.add(call.operationId);
      operation["x-codeSamples"] = codeSamples(call, baseUrl);
    }
  }
}
