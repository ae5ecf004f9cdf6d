import { Type, type SchemaOptions, type Static, type TObject, type TOptional, type TProperties, type TSchema } from "@sinclair/typebox";
import { CHECKS, type CheckCode } from "@svc/domain";

/**
 * The answer of each check: its `attributes` object, one schema per check code.
 * Descriptions, known values and what `registered` means come from the domain's
 * catalog (the one `GET /v1/services` answers from); the JSON types are written
 * here and a test keeps the two in step.
 *
 * Additive by construction: no schema closes its properties (a new attribute is an
 * additive change) and string values are open lists in responses (`x-extensible-enum`).
 */

function attribute(code: CheckCode, name: string) {
  const def = CHECKS[code].attributes.find((a) => a.name === name);
  if (!def) throw new Error(`${code} has no attribute ${name}`);
  return def;
}

const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

const bool = (code: CheckCode, name: string) => Type.Boolean({ description: attribute(code, name).description });
const int = (code: CheckCode, name: string, range: { minimum?: number; maximum?: number } = {}) => Type.Integer({ description: attribute(code, name).description, ...range });
const str = (code: CheckCode, name: string, pattern?: string) => {
  const a = attribute(code, name);
  return Type.String({ description: a.description, ...(a.values ? { enum: [...a.values] } : {}), ...(pattern ? { pattern } : {}) });
};
const nullableStr = (code: CheckCode, name: string, pattern?: string) => Nullable(Type.String({ ...(pattern ? { pattern } : {}) }), { description: attribute(code, name).description });

/** What a component says of its check: what it answers, what `registered` means, what is billed. */
function about(code: CheckCode): { $id: string; title: string; description: string; "x-check-code": CheckCode } {
  const def = CHECKS[code];
  const id = `${code.split(/[._]/).map((w) => w[0]?.toUpperCase() + w.slice(1)).join("")}Attributes`;
  return {
    $id: id,
    title: `${code} attributes`,
    description: [
      `\`attributes\` of a \`${code}\` answer (present when \`status\` is \`ok\`, null otherwise). ${def.description}`,
      `\`registered\` — ${def.registered}`,
      `Billing — ${def.billing}`,
      "New attributes may be added within v1.",
    ].join("\n\n"),
    "x-check-code": code,
  };
}

/**
 * An answer's attributes object. No property is required: answers cached before an
 * attribute was added lack it, and a client must not reject them for that.
 */
const Attributes = <P extends TProperties>(properties: P, code: CheckCode) =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof P]: TOptional<P[K]> }, about(code));

const MONTH = "^[0-9]{4}-(0[1-9]|1[0-2])$";
const COUNTRY = "^[A-Z]{2}$";

export const NumberSpamAttributes = Attributes(
  {
    risk_level: str("number.spam", "risk_level"),
    risk_score: int("number.spam", "risk_score", { minimum: 0, maximum: 100 }),
    reason_regulator: bool("number.spam", "reason_regulator"),
    reason_government: bool("number.spam", "reason_government"),
    reason_community: bool("number.spam", "reason_community"),
    reason_unassigned: bool("number.spam", "reason_unassigned"),
    voip_range: bool("number.spam", "voip_range"),
    top_category: nullableStr("number.spam", "top_category"),
    first_seen: nullableStr("number.spam", "first_seen", MONTH),
    last_seen: nullableStr("number.spam", "last_seen", MONTH),
    sources: int("number.spam", "sources", { minimum: 0 }),
  },
  "number.spam",
);

export const NumberHlrAttributes = Attributes(
  {
    status: str("number.hlr", "status"),
    ported: bool("number.hlr", "ported"),
    roaming: bool("number.hlr", "roaming"),
    network: nullableStr("number.hlr", "network"),
    mcc_mnc: nullableStr("number.hlr", "mcc_mnc"),
    country: nullableStr("number.hlr", "country", COUNTRY),
  },
  "number.hlr",
);

export const WhatsappAttributes = Attributes({ business: bool("whatsapp", "business") }, "whatsapp");

export const CarrierAttributes = Attributes(
  {
    line_type: str("carrier", "line_type"),
    carrier: nullableStr("carrier", "carrier"),
    country: nullableStr("carrier", "country", COUNTRY),
    carrier_source: Nullable(Type.String({ enum: [...(attribute("carrier", "carrier_source").values ?? [])] }), { description: attribute("carrier", "carrier_source").description }),
  },
  "carrier",
);

export const SignalRegisteredAttributes = Attributes({}, "signal.registered");

export const EmailAttributes = Attributes(
  {
    catch_all: bool("email", "catch_all"),
    disposable: bool("email", "disposable"),
    mx_found: bool("email", "mx_found"),
    role_account: bool("email", "role_account"),
    free_provider: bool("email", "free_provider"),
    did_you_mean: nullableStr("email", "did_you_mean"),
  },
  "email",
);

/** The attributes schema of each check code. */
export const CHECK_ATTRIBUTES = {
  "number.spam": NumberSpamAttributes,
  "number.hlr": NumberHlrAttributes,
  whatsapp: WhatsappAttributes,
  carrier: CarrierAttributes,
  "signal.registered": SignalRegisteredAttributes,
  email: EmailAttributes,
} as const satisfies Record<CheckCode, TObject>;

/** `attributes` of a check code's answer, e.g. `CheckAttributes<"number.spam">` (narrow on `service` first). */
export type CheckAttributes<C extends CheckCode> = Static<(typeof CHECK_ATTRIBUTES)[C]>;

/** A check code this document does not know yet (added within v1): its attributes are listed by GET /v1/services. */
export const OtherCheckAttributes = Type.Object(
  {},
  {
    $id: "OtherCheckAttributes",
    title: "attributes of another check",
    description: "A check code added within v1 after this document was generated: an object whose attributes `GET /v1/services` lists for that code.",
  },
);

/** The `registered` field, with its meaning per check. */
export const REGISTERED_DESCRIPTION = [
  "The check's yes/no answer; its meaning depends on the check (`service`). Null when the status is not `ok` or the check has no yes/no answer.",
  ...Object.values(CHECKS).map((c) => `- \`${c.code}\`: ${c.registered}`),
].join("\n");
