import { rowNumber } from "./regulator";
import { dedupeKey, firstDay, type SourceSpec } from "./types";

/** Numbers recently offered as unassigned: `number,offered_on[,country]`; no category. */
export const unassigned: SourceSpec = {
  name: "unassigned",
  source: "unassigned_offers",
  signalClass: "unassigned",
  columns: [
    { name: "number", required: true },
    { name: "offered_on", required: true },
    { name: "country", required: false },
  ],
  acceptsCountry: true,
  read(row, ctx) {
    const number = rowNumber(row, ctx);
    if ("skip" in number) return number;
    const day = firstDay([row.get("offered_on")], ctx.latest);
    if (typeof day !== "string") return day;
    return { e164: number.e164, category: null, reportedOn: day, dedupeKey: dedupeKey(this.source, number.e164, day, []) };
  },
};
