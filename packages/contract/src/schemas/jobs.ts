import { Type } from "@sinclair/typebox";
import { CheckName, MaxCost, MoneySchema, Nullable, ResultRowSchema } from "./common";

// No length limit: an identifier too long to be valid is an \`invalid\` row like any
// other per-row problem (the body limit bounds the request).
const Identifier = Type.String();

export const JobRequest = Type.Object(
  {
    numbers: Type.Optional(Type.Array(Identifier)),
    emails: Type.Optional(Type.Array(Identifier)),
    checks: Type.Array(CheckName, { minItems: 1, maxItems: 20 }),
    max_cost: Type.Optional(MaxCost),
    webhook_endpoint_id: Type.Optional(Type.String({ maxLength: 80 })),
    progress_events: Type.Optional(Type.Boolean({ default: false, description: "Opt in to job.progress events (at most one a minute)." })),
  },
  { additionalProperties: false, $id: "JobRequest" },
);

const Counts = Type.Object({ total: Type.Integer(), valid: Type.Integer(), invalid: Type.Integer(), duplicate: Type.Integer() });

export const EstimateSchema = Type.Object(
  {
    object: Type.Literal("estimate"),
    livemode: Type.Boolean(),
    rows: Counts,
    numbers: Counts,
    emails: Counts,
    checks_total: Type.Integer({ description: "Rows × checks of their input type." }),
    cached_answers: Type.Integer({ description: "Checks that would be answered from the cache (free)." }),
    billable_checks_max: Type.Integer({ description: "Checks that could be billed: valid, unique, not cached." }),
    max_cost: Type.Ref(MoneySchema),
    by_check: Type.Array(
      Type.Object({
        service: Type.String(),
        rows: Type.Integer(),
        cached: Type.Integer(),
        unit_price: Type.Ref(MoneySchema),
        max_cost: Type.Ref(MoneySchema),
      }),
    ),
  },
  { $id: "Estimate" },
);

export const ProgressSchema = Type.Object(
  {
    total: Type.Integer({ description: "Rows (numbers and e-mails)." }),
    checks_total: Type.Integer({ description: "Rows × checks of their input type." }),
    done: Type.Integer({ description: "Finished checks; reaches checks_total when the job finishes." }),
    conclusive: Type.Integer({ description: "Conclusive (billed) answers." }),
    non_billable: Type.Integer({ description: "Unknown, unsupported, invalid, duplicate, cached, cancelled." }),
  },
  { $id: "Progress" },
);

export const JobSchema = Type.Object(
  {
    id: Type.String({ pattern: "^job_" }),
    object: Type.Literal("job"),
    status: Type.String({
      enum: ["queued", "running", "completed", "failed", "cancelled"],
      description: "`queued` (accepted, not started), `running`, then a final status: `completed`, `failed` or `cancelled`.",
    }),
    livemode: Type.Boolean(),
    checks: Type.Array(Type.String()),
    progress: Type.Ref(ProgressSchema),
    cost: Type.Object({
      reserved: Type.Ref(MoneySchema, { description: "Still reserved for unfinished checks; 0 once the job has finished (`finished_at` set)." }),
      charged: Type.Ref(MoneySchema, { description: "Charged for conclusive answers so far; final once the job has finished (`finished_at` set)." }),
    }),
    max_cost: Nullable(Type.Ref(MoneySchema)),
    webhook_endpoint_id: Nullable(Type.String()),
    progress_events: Type.Boolean({ description: "job.progress events were requested." }),
    created_at: Type.String({ format: "date-time" }),
    started_at: Nullable(Type.String({ format: "date-time" })),
    finished_at: Nullable(
      Type.String({ format: "date-time", description: "Set when the job is final and nothing of it is still running (a cancelled job's rows in flight have finished); its cost is final from then on." }),
    ),
    purged_at: Nullable(Type.String({ format: "date-time" })),
    failure: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    results_url: Type.String({ format: "uri" }),
    estimate: Type.Optional(Type.Ref(EstimateSchema, { description: "Only in the creation response." })),
  },
  { $id: "Job" },
);

export const ResultsPageSchema = Type.Object(
  {
    object: Type.Literal("list"),
    data: Type.Array(Type.Ref(ResultRowSchema)),
    has_more: Type.Boolean(),
    next_cursor: Nullable(Type.String({ description: "Opaque cursor for `after`; null on the last page." })),
  },
  { $id: "ResultsPage" },
);

export const ResultsQuery = Type.Object(
  {
    registered: Type.Optional(Type.String({ enum: ["true", "false", "null"], description: "Only rows whose answer for `service` has this `registered` value." })),
    status: Type.Optional(Type.String({ maxLength: 40, description: "Only rows whose `service` check has this status (`ok`, `unknown`, …)." })),
    service: Type.Optional(CheckName),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: "Rows per page: default 100, maximum 1000." })),
    after: Type.Optional(Type.String({ maxLength: 500, description: "Cursor: the previous page's `next_cursor`, unchanged (same filters)." })),
  },
  { additionalProperties: false },
);

export const DownloadQuery = Type.Object(
  { format: Type.String({ enum: ["csv", "ndjson"], description: "`csv` or `ndjson`." }) },
  { additionalProperties: false },
);
