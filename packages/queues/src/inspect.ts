import Ajv, { type ValidateFunction } from "ajv";
import { JOBS, MESSAGE_TAG_FIELD, messageSchema, type JobName } from "./catalog";

const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<JobName, ValidateFunction>();

/**
 * What a message of job `name` shows people (the queue dashboard): its data
 * without the fleet's tag, when that is exactly what the job catalog lets the
 * message carry — its payload's ids and its trace context, nothing else, so no
 * personal data. Null for anything else: it is not shown.
 */
export function catalogView(name: string, data: unknown): object | null {
  if (!Object.hasOwn(JOBS, name) || typeof data !== "object" || data === null) return null;
  const job = name as JobName;
  let validate = validators.get(job);
  if (!validate) validators.set(job, (validate = ajv.compile(messageSchema(job))));
  const { [MESSAGE_TAG_FIELD]: _tag, ...view } = data as Record<string, unknown>;
  return validate(view) === true ? view : null;
}
