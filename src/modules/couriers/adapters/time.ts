/**
 * Courier times (courier-samples README, Implications 4): Indian couriers
 * send naive local times (Asia/Kolkata, UTC+05:30, no DST); UPS sends local
 * `YYYYMMDD` + `HHMMSS`; FedEx, DHL and 17TRACK send ISO strings with an
 * offset. Checkpoints keep the courier-local wall time for `Date`/`Time` and a
 * UTC instant for ordering.
 */
export const IST_OFFSET_MIN = 330;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

export interface LocalTime {
  localDate: string; // YYYY-MM-DD
  localTime: string; // HH:MM
  at: string; // ISO 8601 UTC
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Builds a {@link LocalTime} from wall-clock parts at a fixed UTC offset (minutes east of UTC). */
export function fromParts(y: number, mo: number, d: number, h: number, mi: number, s: number, offsetMin: number): LocalTime | undefined {
  if (![y, mo, d, h, mi, s].every(Number.isFinite) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return undefined;
  const utc = Date.UTC(y, mo - 1, d, h, mi, s) - offsetMin * 60_000;
  if (!Number.isFinite(utc)) return undefined;
  return { localDate: `${pad(y, 4)}-${pad(mo)}-${pad(d)}`, localTime: `${pad(h)}:${pad(mi)}`, at: new Date(utc).toISOString() };
}

/**
 * Parses the naive local formats Indian couriers use, read at `offsetMin`:
 * `2026-11-05T10:20:30(.fff)`, `2026-11-05 10:20(:30)`, `05-Nov-2026` + `10:20`,
 * `05112026` + `1020` (DTDC), `05 Nov, 2026, 10:20` (Ecom Express).
 * Returns undefined for anything else.
 */
export function parseNaive(date: string, time = "", offsetMin = IST_OFFSET_MIN): LocalTime | undefined {
  const ds = date.trim();
  const ts = time.trim();
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?$/.exec(ds);
  if (m) {
    const [hh, mm, ss] = m[4] ? [m[4], m[5], m[6] ?? "0"] : splitTime(ts);
    return fromParts(+m[1]!, +m[2]!, +m[3]!, +hh!, +mm!, +ss!, offsetMin);
  }
  m = /^(\d{1,2})[- ]([A-Za-z]{3})[a-z]*[-, ]+(\d{4})(?:,?\s+(\d{1,2}):(\d{2}))?$/.exec(ds);
  if (m) {
    const mo = MONTHS.indexOf(m[2]!.toLowerCase()) + 1;
    const [hh, mm, ss] = m[4] ? [m[4], m[5], "0"] : splitTime(ts);
    return mo ? fromParts(+m[3]!, mo, +m[1]!, +hh!, +mm!, +ss!, offsetMin) : undefined;
  }
  // Eight digits are DDMMYYYY (DTDC) or YYYYMMDD (UPS): the reading whose parts form a valid date wins,
  // YYYYMMDD first when the number starts with a plausible year.
  m = /^(\d{8})$/.exec(ds);
  if (m) {
    const [hh, mm, ss] = splitTime(ts);
    const ymd = () => fromParts(+ds.slice(0, 4), +ds.slice(4, 6), +ds.slice(6, 8), +hh!, +mm!, +ss!, offsetMin);
    const dmy = () => fromParts(+ds.slice(4, 8), +ds.slice(2, 4), +ds.slice(0, 2), +hh!, +mm!, +ss!, offsetMin);
    return /^(19|20)\d{2}(0[1-9]|1[0-2])/.test(ds) ? (ymd() ?? dmy()) : (dmy() ?? ymd());
  }
  return undefined;
}

/** `HH:MM(:SS)`, `HHMM(SS)` or "" (midnight). */
function splitTime(ts: string): [string, string, string] {
  let m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?/.exec(ts);
  if (m) return [m[1]!, m[2]!, m[3] ?? "0"];
  m = /^(\d{2})(\d{2})(\d{2})?$/.exec(ts);
  if (m) return [m[1]!, m[2]!, m[3] ?? "0"];
  return ["0", "0", "0"];
}

/**
 * Parses an ISO 8601 string with an offset (`2026-11-05T10:20:30+05:30`, `…Z`),
 * keeping the wall time as written for `Date`/`Time`. Without an offset the
 * string is read at `fallbackOffsetMin`.
 */
export function parseIsoLocal(s: string, fallbackOffsetMin = 0): LocalTime | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(s.trim());
  if (!m) return parseNaive(s, "", fallbackOffsetMin);
  let off = fallbackOffsetMin;
  if (m[7] === "Z") off = 0;
  else if (m[7]) {
    const sign = m[7][0] === "-" ? -1 : 1;
    const digits = m[7].slice(1).replace(":", "");
    off = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
  }
  return fromParts(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0), off);
}

/** `YYYY-MM-DD` → `DD-Mon-YYYY` (spec: Checkpoint Date). */
export function toSpecDate(localDate: string): string {
  const [y, m, d] = localDate.split("-");
  const mon = MONTHS[Number(m) - 1] ?? "jan";
  return `${d}-${mon[0]!.toUpperCase()}${mon.slice(1)}-${y}`;
}
