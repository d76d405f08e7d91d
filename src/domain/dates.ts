/** Checkpoint dates and times in the spec's spelling (spec: Resources, Events): `DD-Mon-YYYY` and `HH:MM` 24 h. */

const MONTH_ABBR = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Days in `month` (1–12) of `year`, proleptic Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `2026-11-05` → `05-Nov-2026`, non-dates unchanged; string work only (it runs per checkpoint). */
export function toSpecDate(localDate: string): string {
  if (localDate.length !== 10 || !/^\d{4}-\d{2}-\d{2}$/.test(localDate)) return localDate;
  const month = Number(localDate.slice(5, 7));
  const day = Number(localDate.slice(8, 10));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(localDate.slice(0, 4)), month)) return localDate;
  return `${localDate.slice(8, 10)}-${MONTH_ABBR[month - 1]}-${localDate.slice(0, 4)}`;
}

/** `2026-11-05` or an ISO instant starting with one → `05-Nov-2026`; anything else passes through unchanged. */
export function ddMonYyyy(isoDate: string): string {
  return /^\d{4}-\d{2}-\d{2}/.test(isoDate) ? toSpecDate(isoDate.slice(0, 10)) : isoDate;
}

/** `HH:MM` or `HH:MM:SS` → `HH:MM` (24 h); a missing time is "". */
export function toSpecTime(localTime: string | null | undefined): string {
  return (localTime ?? "").slice(0, 5);
}

/** The earlier of two `YYYY-MM-DD` days (their text order is calendar order). */
export function earlierDay(a: string, b: string): string {
  return a < b ? a : b;
}

/** The later of two `YYYY-MM-DD` days. */
export function laterDay(a: string, b: string): string {
  return a > b ? a : b;
}
