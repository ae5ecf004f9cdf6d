import { Type, type SchemaOptions, type TSchema } from "@sinclair/typebox";
import { CHECK_CODES, CHECK_STATUSES, CHECKS } from "@svc/domain";
import { ERROR_CODE_LIST } from "../error-codes";
import { CHECK_ATTRIBUTES, OtherCheckAttributes, REGISTERED_DESCRIPTION } from "./checks";

export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** Every accepted check name: codes and aliases. */
export const CHECK_NAMES = [...CHECK_CODES, ...Object.values(CHECKS).flatMap((c) => c.aliases)];

export const CheckName = Type.String({
  enum: CHECK_NAMES,
  description: "A check code or alias (`spam` = `number.spam`, `hlr` = `number.hlr`).",
});

export const CheckCodeSchema = Type.String({ enum: [...CHECK_CODES], description: "Check code." });

export const AmountString = Type.String({
  pattern: "^-?(0|[1-9][0-9]{0,11})\\.[0-9]{2,6}$",
  description: "Decimal amount in US dollars with 2 to 6 fraction digits, as a string.",
  examples: ["12.50", "0.0025"],
});

export const MoneySchema = Type.Object(
  { amount: AmountString, currency: Type.Literal("USD") },
  { $id: "Money", description: "An amount of money. Amounts are strings so no client parses them as floats." },
);

export const MaxCost = Type.Object(
  {
    amount: Type.Union([Type.String({ maxLength: 32 }), Type.Number()], {
      description: "Non-negative decimal amount in USD, at most 6 fraction digits, e.g. \"5.00\". A JSON number is accepted too.",
    }),
    currency: Type.Optional(Type.Literal("USD")),
  },
  { additionalProperties: false, description: "Cost ceiling. If the maximum possible cost is higher the request fails with 402 cost_limit_exceeded." },
);

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      // Open on purpose: new codes are an additive change within v1, so a closed `enum` would make
      // clients generated from the document reject an error they could have handled by its status.
      code: Type.String({
        description:
          "Stable code; branch on it. An open list: codes may be added within v1, so for a code you do not know fall back to the HTTP status.",
        "x-extensible-enum": ERROR_CODE_LIST,
        examples: ["invalid_request", "rate_limited"],
      }),
      message: Type.String({ description: "Human text; wording may change; never echoes submitted values." }),
      status: Type.Integer(),
      retryable: Type.Boolean(),
      param: Nullable(Type.String({ description: "Field at fault, e.g. `checks[1]`, `numbers[3]`, `max_cost.amount`, `file`." })),
      suggestion: Type.Optional(Type.String()),
      doc_url: Type.String({ format: "uri" }),
      request_id: Type.String({ pattern: "^req_" }),
    }),
  },
  { $id: "Error" },
);

export const CheckResultSchema = Type.Object(
  {
    service: CheckCodeSchema,
    status: Type.String({
      enum: [...CHECK_STATUSES],
      description:
        "`ok` = conclusive answer (billed unless cached). Free: `pending` (still running), `unknown`, `unsupported_country`, `invalid`, `duplicate`, `suppressed`, `cancelled`. Treat unknown future values as non-conclusive.",
    }),
    registered: Nullable(Type.Boolean(), { description: REGISTERED_DESCRIPTION }),
    // One schema per check code, picked by `service`; open, so a check code or an
    // attribute added within v1 still validates (docs/api-decisions.md#check-answers).
    // Typed as a plain object: narrow with CheckAttributes<code> after reading `service`.
    attributes: Type.Unsafe<Record<string, unknown> | null>({
      anyOf: [...Object.values(CHECK_ATTRIBUTES), OtherCheckAttributes, { type: "null" }],
      description:
        "The check's answer in detail: the schema named after the check in `service` (`number.spam` → NumberSpamAttributes, …); an object for a check added later (its attributes are listed by GET /v1/services); null when `status` is not `ok`.",
    }),
    cached: Type.Boolean({ description: "Answered from the cache; never billed." }),
    billed: Type.Boolean(),
    checked_at: Nullable(Type.String({ format: "date-time" })),
  },
  { $id: "CheckResult" },
);

export const ResultRowSchema = Type.Object(
  {
    row_no: Type.Integer({ minimum: 1, description: "1-based position: numbers first, then e-mails, in input order." }),
    kind: Type.String({ enum: ["number", "email"] }),
    input: Type.String({ description: "The identifier as sent; masked on every read after the creating response." }),
    e164: Nullable(Type.String({ description: "Normalised number (unmasked)." })),
    country: Nullable(Type.String({ description: "ISO 3166-1 alpha-2 country of the number." })),
    number_status: Nullable(Type.String({ enum: ["valid", "invalid", "duplicate", "suppressed"] })),
    email: Nullable(Type.String({ description: "Normalised address, domain lower-cased (unmasked)." })),
    email_status: Nullable(Type.String({ enum: ["valid", "invalid", "duplicate", "suppressed"] })),
    checks: Type.Array(Type.Ref(CheckResultSchema), { description: "Every requested check of the row's input type, in request order." }),
  },
  { $id: "ResultRow" },
);

export const IdParam = Type.String({ minLength: 3, maxLength: 80, description: "Object id (`lkp_…`, `job_…` or `we_…`)." });
