import { normaliseCategory, withRobocallFlag } from "./categories";
import { normaliseNumber } from "./numbers";
import { dedupeKey, firstDay, squeeze, type SourceSpec } from "./types";

/** Issues of the unwanted-calls form; other FCC complaints (billing, coverage…) are not spam reports. */
const UNWANTED_CALL_ISSUE = /unwanted|robocall|telemarket|do not call|spoof|fax|caller id/i;
const PRERECORDED = /pre-?recorded|recorded message|robo|artificial/i;

/**
 * FCC Consumer Complaints, "Unwanted Calls" export (opendata.fcc.gov). Read:
 * Ticket ID, Date of Issue, Ticket Created, Issue, Caller ID Number, Advertiser
 * Business Number, Type of Call or Messge. City, State, Zip, Location and the
 * other columns are never read.
 */
export const fcc: SourceSpec = {
  name: "fcc",
  source: "fcc_complaints",
  signalClass: "government",
  columns: [
    { name: "Ticket ID", required: true },
    { name: "Date of Issue", required: true },
    { name: "Issue", required: true },
    { name: "Caller ID Number", required: true },
    { name: "Ticket Created", required: false },
    { name: "Advertiser Business Number", required: false },
    { name: "Type of Call or Messge", required: false, aliases: ["Type of Call or Message"] },
  ],
  acceptsCountry: false,
  read(row, ctx) {
    const issue = squeeze(row.get("Issue"));
    if (issue !== "" && !UNWANTED_CALL_ISSUE.test(issue)) return { skip: "not_unwanted_call" };
    // The caller ID may be spoofed or withheld; the number the caller asked to be called back on is the fallback.
    const callerId = row.get("Caller ID Number");
    let number = normaliseNumber(callerId, "US", ["US", "CA"]);
    if (!number.ok) {
      const advertiser = normaliseNumber(row.get("Advertiser Business Number"), "US", ["US", "CA"]);
      if (advertiser.ok || number.reason === "missing_number") number = advertiser;
    }
    if (!number.ok) return { skip: number.reason };
    const issued = squeeze(row.get("Date of Issue"));
    const created = squeeze(row.get("Ticket Created"));
    const day = firstDay([issued, created], ctx.latest);
    if (typeof day !== "string") return day;
    const type = squeeze(row.get("Type of Call or Messge"));
    const ticket = squeeze(row.get("Ticket ID"));
    const parts = ticket !== "" ? ["ticket", ticket] : ["row", issued, created, issue.toLowerCase(), type.toLowerCase(), squeeze(callerId), squeeze(row.get("Advertiser Business Number"))];
    return {
      e164: number.e164,
      category: withRobocallFlag(normaliseCategory(issue), PRERECORDED.test(type)),
      reportedOn: day,
      dedupeKey: dedupeKey(this.source, number.e164, day, parts),
    };
  },
};
