import { Type } from "@sinclair/typebox";
import { MoneySchema, Nullable } from "./common";

export const AccountSchema = Type.Object(
  {
    object: Type.Literal("account"),
    id: Type.String(),
    name: Type.String(),
    livemode: Type.Boolean({ description: "Mode of the calling key; usage figures are for this mode." }),
    balance: Type.Ref(MoneySchema),
    reserved: Type.Ref(MoneySchema, { description: "Held for running requests." }),
    available: Type.Ref(MoneySchema, { description: "balance - reserved." }),
    low_balance_threshold: Nullable(Type.Ref(MoneySchema)),
    retention_days: Type.Integer(),
    today: Type.Object({
      date: Type.String({ format: "date", description: "Current UTC day." }),
      identifiers: Type.Integer(),
      checks: Type.Integer(),
      conclusive: Type.Integer(),
      spend: Type.Ref(MoneySchema),
    }),
  },
  { $id: "Account" },
);

const Cap = Type.Object({ limit: Type.Ref(MoneySchema), used: Type.Ref(MoneySchema), resets_at: Type.String({ format: "date-time" }) });

export const LimitsSchema = Type.Object(
  {
    object: Type.Literal("limits"),
    request_rate: Type.Object(
      {
        per_second: Type.Optional(Type.Integer()),
        burst: Type.Optional(Type.Integer()),
        per_minute: Type.Optional(Type.Integer()),
        per_day: Type.Optional(Type.Integer()),
        scope: Type.String({ enum: ["key", "ip"], description: "`key`: per API key; `ip`: per caller address (public sandbox key)." }),
      },
      { description: "10 a second with bursts of 20 per key; the public sandbox key: 30 a minute and 1,000 a day per IP address." },
    ),
    request_sizes: Type.Object({
      lookup_identifiers: Type.Integer(),
      job_identifiers: Type.Integer(),
      checks_per_request: Type.Integer(),
      lookup_identifier_checks: Type.Integer(),
      job_identifier_checks: Type.Integer(),
      body_bytes: Type.Integer(),
      job_body_bytes: Type.Integer(),
    }),
    daily_identifiers_cap: Nullable(Type.Object({ limit: Type.Integer(), used: Type.Integer(), resets_at: Type.String({ format: "date-time" }) })),
    account_daily_spend_cap: Nullable(Cap),
    key_daily_spend_cap: Nullable(Cap),
  },
  { $id: "Limits" },
);

export const UsageQuery = Type.Object(
  {
    from: Type.String({ format: "date", description: "First UTC day (YYYY-MM-DD)." }),
    to: Type.String({ format: "date", description: "Last UTC day, inclusive; at most 366 days after `from`." }),
    group_by: Type.Optional(Type.String({ enum: ["day", "check"], default: "day", description: "`day`: one entry per UTC day of the range, zero-filled; `check`: one entry per check." })),
  },
  { additionalProperties: false },
);

const UsageFigures = {
  checks: Type.Integer(),
  conclusive: Type.Integer(),
  cached: Type.Integer(),
  billed_units: Type.Integer(),
  cost: Type.Ref(MoneySchema),
};

export const UsageSchema = Type.Object(
  {
    object: Type.Literal("usage"),
    livemode: Type.Boolean(),
    from: Type.String({ format: "date" }),
    to: Type.String({ format: "date" }),
    group_by: Type.String({ enum: ["day", "check"] }),
    data: Type.Array(Type.Object({ day: Type.Optional(Type.String({ format: "date" })), service: Type.Optional(Type.String()), ...UsageFigures })),
    totals: Type.Object(UsageFigures),
  },
  { $id: "Usage" },
);
