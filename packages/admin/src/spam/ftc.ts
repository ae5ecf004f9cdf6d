import { normaliseCategory, withRobocallFlag } from "./categories";
import { normaliseNumber } from "./numbers";
import { dedupeKey, firstDay, squeeze, type SourceSpec } from "./types";

const YES = /^(y|yes|true|1)$/i;

/**
 * FTC Do Not Call "reported calls" CSV. Read: Company_Phone_Number,
 * Created_Date, Violation_Date, Subject, Recorded_Message_Or_Robocall. The
 * consumer's city, state and area code are never read.
 */
export const ftc: SourceSpec = {
  name: "ftc",
  source: "ftc_dnc",
  signalClass: "government",
  columns: [
    { name: "Company_Phone_Number", required: true },
    { name: "Created_Date", required: true },
    { name: "Violation_Date", required: true },
    { name: "Subject", required: true },
    { name: "Recorded_Message_Or_Robocall", required: true },
  ],
  acceptsCountry: false,
  read(row, ctx) {
    const number = normaliseNumber(row.get("Company_Phone_Number"), "US", ["US", "CA"]);
    if (!number.ok) return { skip: number.reason };
    const created = squeeze(row.get("Created_Date"));
    const violation = squeeze(row.get("Violation_Date"));
    const day = firstDay([violation, created], ctx.latest);
    if (typeof day !== "string") return day;
    const robocall = YES.test(squeeze(row.get("Recorded_Message_Or_Robocall")));
    const subject = squeeze(row.get("Subject")).toLowerCase();
    return {
      e164: number.e164,
      category: withRobocallFlag(normaliseCategory(subject), robocall),
      reportedOn: day,
      dedupeKey: dedupeKey(this.source, number.e164, day, [created, violation, subject, robocall ? "Y" : "N"]),
    };
  },
};
