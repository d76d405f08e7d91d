/**
 * Output formatting of checkpoint dates and times in the spec's spelling (spec: Resources — checkpoint `Date` is
 * `DD-Mon-YYYY`, `Time` is `HH:MM` 24 h; spec: Events, payload `date`/`time` the same). Parsing courier formats stays
 * in the adapters (src/modules/couriers/adapters/time.ts). Part of `src/domain/`, the shared vocabulary.
 */
import { DateTime } from "luxon";

/**
 * `YYYY-MM-DD` → `DD-Mon-YYYY` with English month abbreviations (`2026-11-05` → `05-Nov-2026`).
 * A string that is not a calendar date is returned unchanged.
 */
export function toSpecDate(localDate: string): string {
  const dt = DateTime.fromFormat(localDate, "yyyy-MM-dd", { zone: "UTC", locale: "en-US" });
  return dt.isValid ? dt.toFormat("dd-LLL-yyyy") : localDate;
}

/** `2026-11-05` or an ISO instant starting with one → `05-Nov-2026`; anything else passes through unchanged. */
export function ddMonYyyy(isoDate: string): string {
  return /^\d{4}-\d{2}-\d{2}/.test(isoDate) ? toSpecDate(isoDate.slice(0, 10)) : isoDate;
}

/** `HH:MM` or `HH:MM:SS` → `HH:MM` (24 h); a missing time is "". */
export function toSpecTime(localTime: string | null | undefined): string {
  return (localTime ?? "").slice(0, 5);
}
