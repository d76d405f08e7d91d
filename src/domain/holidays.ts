/**
 * Courier non-working days in India (docs/predictions.md, "Non-working days"): Sundays and the holidays below.
 * Source: Department of Personnel and Training (Government of India), office memorandum on the holidays of central
 * government offices for 2026 — the compulsory (gazetted) list; moon-dependent Id dates as published, which DoPT may
 * re-notify. Later years hold only the fixed-date national holidays (Republic Day, Independence Day, Gandhi Jayanti)
 * and Christmas until DoPT publishes their list. Couriers deliver on most state holidays, so those are left out.
 */

/** Holidays by `YYYY-MM-DD`, with their name. */
const HOLIDAYS: Readonly<Record<string, string>> = {
  "2026-01-26": "Republic Day",
  "2026-03-04": "Holi",
  "2026-03-21": "Id-ul-Fitr",
  "2026-03-26": "Ram Navami",
  "2026-03-31": "Mahavir Jayanti",
  "2026-04-03": "Good Friday",
  "2026-05-01": "Buddha Purnima",
  "2026-05-27": "Id-ul-Zuha (Bakrid)",
  "2026-06-26": "Muharram",
  "2026-08-15": "Independence Day",
  "2026-08-26": "Milad-un-Nabi",
  "2026-09-04": "Janmashtami",
  "2026-10-02": "Mahatma Gandhi's Birthday",
  "2026-10-20": "Dussehra",
  "2026-11-08": "Diwali",
  "2026-11-24": "Guru Nanak's Birthday",
  "2026-12-25": "Christmas Day",
};

/** Fixed-date holidays of every year (`MM-DD`): the three national holidays and Christmas. */
const EVERY_YEAR = new Set(["01-26", "08-15", "10-02", "12-25"]);

const weekday = (day: string) => new Date(`${day}T00:00:00Z`).getUTCDay();

/** Whether couriers deliver on `day` (`YYYY-MM-DD`): not a Sunday, not a listed holiday. */
export function isWorkingDay(day: string): boolean {
  return weekday(day) !== 0 && !(day in HOLIDAYS) && !EVERY_YEAR.has(day.slice(5));
}

/** `day` plus `n` calendar days, `YYYY-MM-DD`. */
export const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** `day` itself when a working day, else the next working day. */
export function nextWorkingDay(day: string): string {
  let d = day;
  while (!isWorkingDay(d)) d = addDays(d, 1);
  return d;
}
