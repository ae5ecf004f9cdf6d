import { InvalidArgumentError } from "../errors";
import { operation, type RequestOptions, type Transport } from "../transport";
import type { Account, Limits, Usage } from "../types";

export interface UsageParams {
  /** First UTC day: `YYYY-MM-DD` or a Date (its UTC day). */
  from: string | Date;
  /** Last UTC day, inclusive (at most 366 days after `from`). */
  to: string | Date;
  /** One row per `day` (default) or per `check`. */
  groupBy?: "day" | "check" | (string & {});
}

/** GET /v1/account: balance, reserved amount and today's usage. */
export class AccountResource {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  async get(options?: RequestOptions): Promise<Account> {
    return (await this.#t.call<Account>(operation("getAccount"), { options })).data;
  }
}

/** GET /v1/limits: request rate, request sizes, daily caps. */
export class LimitsResource {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  async get(options?: RequestOptions): Promise<Limits> {
    return (await this.#t.call<Limits>(operation("getLimits"), { options })).data;
  }
}

/** GET /v1/usage: per UTC day or per check, for the key's mode. */
export class UsageResource {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  async get(params: UsageParams, options?: RequestOptions): Promise<Usage> {
    if (!params || params.from === undefined || params.to === undefined) throw new InvalidArgumentError(params?.from === undefined ? "from" : "to", "`from` and `to` (UTC days) are required.");
    const query = { from: day(params.from, "from"), to: day(params.to, "to"), group_by: params.groupBy };
    return (await this.#t.call<Usage>(operation("getUsage"), { query, options })).data;
  }
}

function day(value: string | Date, param: string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new InvalidArgumentError(param, `\`${param}\` is an invalid Date.`);
    return value.toISOString().slice(0, 10);
  }
  if (typeof value !== "string") throw new InvalidArgumentError(param, `\`${param}\` must be a YYYY-MM-DD string or a Date.`);
  return value;
}
