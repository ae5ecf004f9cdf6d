import { normaliseCategory } from "./categories";
import { rowNumber } from "./regulator";
import { dedupeKey, firstDay, squeeze, type SourceSpec } from "./types";

/** Community reports: `number,reported_at,category[,report_id][,country]`. */
export const community: SourceSpec = {
  name: "community",
  source: "community",
  signalClass: "community",
  columns: [
    { name: "number", required: true },
    { name: "reported_at", required: true },
    { name: "category", required: true },
    { name: "report_id", required: false },
    { name: "country", required: false },
  ],
  acceptsCountry: true,
  read(row, ctx) {
    const number = rowNumber(row, ctx);
    if ("skip" in number) return number;
    const reportedAt = squeeze(row.get("reported_at"));
    const day = firstDay([reportedAt], ctx.latest);
    if (typeof day !== "string") return day;
    const category = normaliseCategory(row.get("category"));
    const reportId = squeeze(row.get("report_id"));
    const parts = reportId !== "" ? ["id", reportId] : ["at", reportedAt, category ?? ""];
    return { e164: number.e164, category, reportedOn: day, dedupeKey: dedupeKey(this.source, number.e164, day, parts) };
  },
};
