import { Type } from "@sinclair/typebox";
import { CheckName, MaxCost, Nullable, ResultRowSchema } from "./common";

// No length limit: an identifier too long to be valid is an \`invalid\` row like any
// other per-row problem (the body limit bounds the request).
const Identifier = Type.String();

export const LookupRequest = Type.Object(
  {
    numbers: Type.Optional(Type.Array(Identifier, { description: "Phone numbers with country code. Phone checks apply to these." })),
    emails: Type.Optional(Type.Array(Identifier, { description: "E-mail addresses. E-mail checks apply to these." })),
    checks: Type.Array(CheckName, { minItems: 1, maxItems: 20, description: "Checks to run; each runs for every identifier of its input type. At most 20." }),
    wait: Type.Optional(Type.Number({ minimum: 0, maximum: 30, default: 10, description: "Seconds to wait for all answers before answering 202 pending." })),
    webhook_endpoint_id: Type.Optional(Type.String({ maxLength: 80, description: "A verified endpoint (`we_…`) of the key's mode, notified with lookup.completed." })),
    max_cost: Type.Optional(MaxCost),
  },
  { additionalProperties: false, $id: "LookupRequest" },
);

export const LookupSummary = Type.Object({
  total: Type.Integer({ description: "Rows." }),
  registered: Type.Integer({
    description:
      "Check answers with `registered: true`, over every check and row together, whatever the check: for `number.spam` that is a number with spam reports held, for `email` a mailbox that exists, for `whatsapp` an account. Count per check from `results` when the checks mean different things.",
  }),
  not_registered: Type.Integer({ description: "Check answers with `registered: false`, over every check and row together." }),
  unknown: Type.Integer({ description: "Check answers with `registered: null`: no yes/no answer (`carrier`, a catch-all mailbox) or no conclusive answer." }),
});

export const LookupSchema = Type.Object(
  {
    id: Type.String({ pattern: "^lkp_" }),
    object: Type.Literal("lookup"),
    status: Type.String({ enum: ["pending", "completed"] }),
    livemode: Type.Boolean(),
    checks: Type.Array(Type.String(), { description: "Resolved check codes, in request order." }),
    created_at: Type.String({ format: "date-time" }),
    completed_at: Nullable(Type.String({ format: "date-time" })),
    webhook_endpoint_id: Nullable(Type.String()),
    summary: LookupSummary,
    results: Type.Array(Type.Ref(ResultRowSchema)),
    next: Type.Optional(Type.Object({ poll_url: Type.String({ format: "uri" }) }, { description: "Present while pending." })),
  },
  { $id: "Lookup" },
);

export const LookupPathParams = Type.Object({ id: Type.String({ maxLength: 80 }) });

export const WaitQuery = Type.Object(
  { wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, default: 0, description: "Seconds (0-30) to hold the request until the object reaches a final status." })) },
  { additionalProperties: false },
);
