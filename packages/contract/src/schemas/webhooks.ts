import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import { MoneySchema, Nullable } from "./common";
import { LookupSummary } from "./lookup";

export const EVENT_TYPES = [
  "lookup.completed",
  "job.completed",
  "job.failed",
  "job.progress",
  "balance.low",
  "limits.cap_reached",
  "webhook.verification",
  "webhook.test",
] as const;

/** Types an endpoint may subscribe to; verification and test events are always sent. */
export const SUBSCRIBABLE_EVENTS = EVENT_TYPES.filter((t) => !t.startsWith("webhook."));

const EventName = Type.String({ enum: [...SUBSCRIBABLE_EVENTS] });

export const WebhookEndpointCreate = Type.Object(
  {
    url: Type.String({ maxLength: 2048, description: "https:// URL resolving only to public addresses. Redirects are not followed." }),
    events: Type.Array(EventName, { minItems: 1, maxItems: SUBSCRIBABLE_EVENTS.length, uniqueItems: true }),
  },
  { additionalProperties: false, $id: "WebhookEndpointCreate" },
);

export const WebhookEndpointUpdate = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    events: Type.Optional(Type.Array(EventName, { minItems: 1, maxItems: SUBSCRIBABLE_EVENTS.length, uniqueItems: true })),
  },
  { additionalProperties: false, minProperties: 1, $id: "WebhookEndpointUpdate" },
);

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ pattern: "^we_" }),
    object: Type.Literal("webhook_endpoint"),
    url: Type.String(),
    events: Type.Array(Type.String()),
    status: Type.String({ enum: ["pending_verification", "active"] }),
    livemode: Type.Boolean(),
    created_at: Type.String({ format: "date-time" }),
    verified_at: Nullable(Type.String({ format: "date-time" })),
    secret: Type.Optional(Type.String({ pattern: "^whsec_", description: "Signing secret; only in the creation response." })),
  },
  { $id: "WebhookEndpoint" },
);

export const WebhookEndpointListSchema = Type.Object(
  { object: Type.Literal("list"), data: Type.Array(Type.Ref(WebhookEndpointSchema)) },
  { $id: "WebhookEndpointList" },
);

/** 202 answer of POST /v1/webhook_endpoints/{id}/test. */
export const WebhookTestQueuedSchema = Type.Object({ object: Type.Literal("event"), id: Type.String({ pattern: "^evt_" }), type: Type.Literal("webhook.test") });

export const EventEnvelope = <T extends string, D extends TSchema>(type: T, data: D) =>
  Type.Object({
    type: Type.Literal(type),
    id: Type.String({ pattern: "^evt_" }),
    created_at: Type.String({ format: "date-time" }),
    livemode: Type.Boolean(),
    data,
  });

const ProgressData = Type.Object({ total: Type.Integer(), checks_total: Type.Integer(), done: Type.Integer(), conclusive: Type.Integer(), non_billable: Type.Integer() });

/** Payloads of every event type. None carries a phone number or e-mail address. */
export const EVENT_PAYLOADS = {
  "lookup.completed": EventEnvelope(
    "lookup.completed",
    Type.Object({
      object: Type.Literal("lookup"),
      id: Type.String(),
      status: Type.Literal("completed"),
      livemode: Type.Boolean(),
      summary: LookupSummary,
    }),
  ),
  "job.completed": EventEnvelope(
    "job.completed",
    Type.Object({ object: Type.Literal("job"), id: Type.String(), status: Type.Literal("completed"), progress: ProgressData, results_url: Type.String() }),
  ),
  "job.failed": EventEnvelope(
    "job.failed",
    Type.Object({
      object: Type.Literal("job"),
      id: Type.String(),
      status: Type.Literal("failed"),
      progress: ProgressData,
      failure: Type.Object({ code: Type.String(), message: Type.String() }),
      results_url: Type.String(),
    }),
  ),
  "job.progress": EventEnvelope(
    "job.progress",
    Type.Object({ object: Type.Literal("job"), id: Type.String(), status: Type.String(), progress: ProgressData }),
  ),
  "balance.low": EventEnvelope(
    "balance.low",
    Type.Object({ object: Type.Literal("account"), balance: Type.Ref(MoneySchema), threshold: Type.Ref(MoneySchema) }),
  ),
  "limits.cap_reached": EventEnvelope(
    "limits.cap_reached",
    Type.Object({
      object: Type.Literal("limit"),
      cap: Type.String({ enum: ["daily_identifiers", "account_daily_spend", "key_daily_spend"] }),
      limit: Type.String({ description: "Count or amount of the cap." }),
      resets_at: Type.String({ format: "date-time" }),
      key_hint: Nullable(Type.String()),
    }),
  ),
  "webhook.verification": EventEnvelope(
    "webhook.verification",
    Type.Object({ object: Type.Literal("webhook_endpoint"), id: Type.String(), challenge: Type.String({ description: "Random value; answer any 2xx to verify." }) }),
  ),
  "webhook.test": EventEnvelope(
    "webhook.test",
    Type.Object({ object: Type.Literal("webhook_endpoint"), id: Type.String(), message: Type.String() }),
  ),
} satisfies Record<(typeof EVENT_TYPES)[number], TObject>;
