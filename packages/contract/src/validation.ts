import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { TSchema } from "@sinclair/typebox";
import { ApiError } from "./api-error";
import { CheckResultSchema, MoneySchema, ResultRowSchema } from "./schemas/common";

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, coerceTypes, useDefaults: true, strict: false });
  addFormats(ajv);
  for (const s of [MoneySchema, CheckResultSchema, ResultRowSchema]) ajv.addSchema(s);
  return ajv;
}

/** JSON bodies are validated strictly; query strings are text, so they are coerced. */
const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

/** `/numbers/3` → `numbers[3]`, `/max_cost/amount` → `max_cost.amount`. */
export function pointerToParam(pointer: string): string | null {
  if (!pointer) return null;
  let out = "";
  for (const part of pointer.split("/").slice(1)) {
    const token = part.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(token) ? `[${token}]` : out ? `.${token}` : token;
  }
  return out || null;
}

const SAFE_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * One ajv error → one `invalid_request` with `param`. Messages are written here,
 * never taken from the input, so nothing submitted is echoed back.
 */
export function toApiError(err: ErrorObject, where: "body" | "query"): ApiError {
  const at = pointerToParam(err.instancePath);
  const child = (name: string) => (at ? `${at}.${name}` : name);
  switch (err.keyword) {
    case "required": {
      const missing = String((err.params as { missingProperty: string }).missingProperty);
      return new ApiError("invalid_request", { param: child(missing), message: `A required field is missing (${child(missing)}).` });
    }
    case "additionalProperties": {
      // Name the unknown field only when it is one of ours in shape; never reflect arbitrary input.
      const extra = String((err.params as { additionalProperty: string }).additionalProperty);
      const named = SAFE_NAME.test(extra) && !/\d{5,}/.test(extra);
      return new ApiError("invalid_request", {
        param: named ? child(extra) : at,
        message: where === "query" ? "The query string contains a parameter this endpoint does not accept." : "The request body contains a field this endpoint does not accept.",
        suggestion: "Remove fields that are not documented for this endpoint.",
      });
    }
    case "type":
      return new ApiError("invalid_request", { param: at, message: `Wrong type: ${at ?? where} must be ${String((err.params as { type: string }).type)}.` });
    case "enum":
      if (at && /^checks\[\d+\]$/.test(at)) {
        return new ApiError("invalid_request", { param: at, message: "Unknown check code.", suggestion: "See GET /v1/services for the check codes and aliases." });
      }
      return new ApiError("invalid_request", { param: at, message: `Unsupported value for ${at ?? where}.` });
    case "maxItems":
      if (at === "checks") return new ApiError("invalid_request", { param: at, message: "At most 20 checks per request." });
      return new ApiError("invalid_request", { param: at, message: `Too many items in ${at ?? where}.` });
    case "minItems":
      return new ApiError("invalid_request", { param: at, message: `${at ?? where} must not be empty.` });
    case "uniqueItems":
      return new ApiError("invalid_request", { param: at, message: `${at ?? where} must not repeat values.` });
    case "minProperties":
      return new ApiError("invalid_request", { param: null, message: "The request body must contain at least one field." });
    default:
      return new ApiError("invalid_request", { param: at, message: `Invalid value for ${at ?? where}.` });
  }
}

export type Validator<T> = (data: unknown) => T;

const caches = new Map<Ajv, WeakMap<TSchema, ValidateFunction>>([
  [bodyAjv, new WeakMap()],
  [queryAjv, new WeakMap()],
]);

function compiled(ajv: Ajv, schema: TSchema): ValidateFunction {
  const cache = caches.get(ajv) as WeakMap<TSchema, ValidateFunction>;
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

/** Validates (and fills defaults into) a parsed JSON body; throws `invalid_request`. */
export function validateBody<T>(schema: TSchema, data: unknown): T {
  const fn = compiled(bodyAjv, schema);
  if (!fn(data)) throw toApiError((fn.errors ?? [])[0] as ErrorObject, "body");
  return data as T;
}

/** Validates and coerces a query object (mutates it in place); throws `invalid_request`. */
export function validateQuery<T>(schema: TSchema, data: Record<string, unknown>): T {
  const fn = compiled(queryAjv, schema);
  if (!fn(data)) throw toApiError((fn.errors ?? [])[0] as ErrorObject, "query");
  return data as T;
}
