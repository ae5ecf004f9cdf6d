import { Type } from "@sinclair/typebox";
import { MoneySchema, Nullable } from "./common";

export const ServiceSchema = Type.Object(
  {
    code: Type.String(),
    aliases: Type.Array(Type.String()),
    input: Type.String({ enum: ["number", "email"], description: "Identifier type the check applies to." }),
    realtime: Type.Boolean({ description: "Allowed on POST /v1/lookup. False = bulk jobs only." }),
    bulk: Type.Boolean({ description: "Allowed in bulk jobs." }),
    description: Type.String(),
    countries: Nullable(Type.Array(Type.String(), { description: "Supported countries; null = all." })),
    attributes: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String({ description: "JSON type: `string`, `integer` or `boolean`, with `|null` when the attribute may be null." }),
        description: Type.String(),
        values: Type.Optional(Type.Array(Type.String(), { description: "Known values of a string attribute; an open list (new values may be added within v1)." })),
      }),
      { description: "What a conclusive answer of this check carries in `attributes`; the same as the check's `…Attributes` schema in this document." },
    ),
    prices: Type.Object(
      { live: Type.Ref(MoneySchema), test: Type.Ref(MoneySchema) },
      { description: "Price per conclusive answer by mode (agent keys use live prices). Test mode is never billed." },
    ),
  },
  { $id: "Service" },
);

export const ServiceListSchema = Type.Object(
  { object: Type.Literal("list"), account_specific: Type.Boolean({ description: "True when prices and availability are the calling account's." }), data: Type.Array(Type.Ref(ServiceSchema)) },
  { $id: "ServiceList" },
);

export const HealthSchema = Type.Object(
  { status: Type.Literal("ok"), database: Type.Literal("ok"), time: Type.String({ format: "date-time" }) },
  { $id: "Health" },
);

export const TestKeyChallengeSchema = Type.Object(
  {
    challenge: Type.String({ description: "Opaque, signed, single-use challenge." }),
    algorithm: Type.Literal("sha256"),
    difficulty: Type.Integer({ description: "Leading zero bits required in SHA-256(challenge + \":\" + nonce)." }),
    expires_at: Type.String({ format: "date-time" }),
    token_format: Type.String({ description: "How to build challenge_token from a solution." }),
  },
  { $id: "TestKeyChallenge" },
);

export const TestKeyRequest = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254, description: "Work e-mail address." }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    company: Type.String({ minLength: 1, maxLength: 200 }),
    use_case: Type.String({ minLength: 1, maxLength: 2000 }),
    challenge_token: Type.String({ minLength: 1, maxLength: 1000, description: "`<challenge>:<nonce>` solving the proof-of-work from GET /v1/test-keys/challenge." }),
  },
  { additionalProperties: false, $id: "TestKeyRequest" },
);

export const TestKeySchema = Type.Object(
  {
    object: Type.Literal("test_key"),
    key: Type.String({ description: "The personal test key (`svc_test_…`). Shown only in this response; store it now." }),
    mode: Type.Literal("test"),
    scopes: Type.Array(Type.String()),
    created_at: Type.String({ format: "date-time" }),
    live_access: Type.Object({ status: Type.Literal("requested"), note: Type.String() }),
  },
  { $id: "TestKey" },
);
