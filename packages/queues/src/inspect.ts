import Ajv, { type ValidateFunction } from "ajv";
import { JOBS, messageSchema, type JobName } from "./catalog";

const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<JobName, ValidateFunction>();

/**
 * Whether `data` is exactly what the job catalog lets a message of job `name`
 * carry: its payload's ids and its trace context, nothing else. For tools that
 * show messages to people (the queue dashboard): a message that passes holds no
 * personal data; one that does not is not shown.
 */
export function isCatalogMessage(name: string, data: unknown): boolean {
  if (!Object.hasOwn(JOBS, name)) return false;
  const job = name as JobName;
  let validate = validators.get(job);
  if (!validate) validators.set(job, (validate = ajv.compile(messageSchema(job))));
  return validate(data) === true;
}
