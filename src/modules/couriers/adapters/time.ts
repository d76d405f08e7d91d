/** Courier times via Luxon with explicit zones (carriers/README.md, "Implications" 4). */
import { DateTime, FixedOffsetZone, IANAZone, type Zone } from "luxon";

/** The zone of Indian couriers' naive times (IST, UTC+05:30, no DST). */
export const IST_ZONE = "Asia/Kolkata";

/** Where a naive wall time is read: an IANA zone name, or a fixed offset in minutes east of UTC. */
export type CourierZone = string | number;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

export interface LocalTime {
  /** Courier-local date, `YYYY-MM-DD`. */
  localDate: string;
  /** Courier-local time, `HH:MM` (24 h). */
  localTime: string;
  /** The same instant, ISO 8601 UTC with milliseconds. */
  at: string;
}

/** An IANA zone with offsets memoised per 15-minute UTC slot (every transition since 1970 falls on one). */
class MemoZone extends IANAZone {
  private readonly memo = new Map<number, number>();
  override offset(ts: number): number {
    const slot = Math.floor(ts / 900_000);
    let o = this.memo.get(slot);
    if (o === undefined) {
      o = super.offset(ts);
      if (this.memo.size >= 50_000) this.memo.clear();
      this.memo.set(slot, o);
    }
    return o;
  }
}

const zones = new Map<CourierZone, Zone>();

/** The Luxon zone for `zone`, built once (an IANA zone or a fixed offset). */
function zoneOf(zone: CourierZone): Zone {
  let z = zones.get(zone);
  if (!z) {
    z = typeof zone === "number" ? FixedOffsetZone.instance(zone) : new MemoZone(zone);
    zones.set(zone, z);
  }
  return z;
}

/** Zero-padded to `w` digits; the common two-digit case without `padStart` (it runs per checkpoint field). */
const pad = (n: number, w = 2) => (w === 2 && n >= 0 && n < 10 ? `0${n}` : String(n).padStart(w, "0"));

/** A {@link LocalTime} from wall-clock parts read in `zone`; undefined when not a real date and time. */
export function fromParts(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  zone: CourierZone,
): LocalTime | undefined {
  // Luxon reads hour 24 as the next day's midnight (ISO 8601 allows 24:00); no courier means that.
  if (![y, mo, d, h, mi, s].every(Number.isInteger) || h > 23) return undefined;
  const dt = DateTime.fromObject(
    { year: y, month: mo, day: d, hour: h, minute: mi, second: s },
    { zone: zoneOf(zone) },
  );
  if (!dt.isValid) return undefined;
  return {
    localDate: `${pad(y, 4)}-${pad(mo)}-${pad(d)}`,
    localTime: `${pad(h)}:${pad(mi)}`,
    at: new Date(dt.toMillis()).toISOString(),
  };
}

/**
 * Parses the naive local formats couriers use, read in `zone` (default IST): ISO without offset, `05-Nov-2026`,
 * `07 June 2012`, `05112026` + `1020` (DTDC), `20220126` + `143015` (UPS), `05 Nov, 2026, 10:20` (Ecom Express).
 */
export function parseNaive(date: string, time = "", zone: CourierZone = IST_ZONE): LocalTime | undefined {
  const ds = date.trim();
  const ts = time.trim();
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?$/.exec(ds);
  if (m) {
    const [hh, mm, ss] = m[4] ? [m[4], m[5], m[6] ?? "0"] : splitTime(ts);
    return fromParts(Number(m[1]), Number(m[2]), Number(m[3]), Number(hh), Number(mm), Number(ss), zone);
  }
  m = /^(\d{1,2})[- ]([A-Za-z]{3})[a-z]*[-, ]+(\d{4})(?:,?\s+(\d{1,2}):(\d{2}))?$/.exec(ds);
  if (m) {
    const mo = MONTHS.indexOf((m[2] ?? "").toLowerCase()) + 1;
    const [hh, mm, ss] = m[4] ? [m[4], m[5], "0"] : splitTime(ts);
    return mo ? fromParts(Number(m[3]), mo, Number(m[1]), Number(hh), Number(mm), Number(ss), zone) : undefined;
  }
  // Eight digits are DDMMYYYY (DTDC) or YYYYMMDD (UPS): the reading that is a real date wins,
  // YYYYMMDD first when the number starts with a plausible year and month.
  m = /^(\d{8})$/.exec(ds);
  if (m) {
    const [hh, mm, ss] = splitTime(ts);
    const ymd = () =>
      fromParts(+ds.slice(0, 4), +ds.slice(4, 6), +ds.slice(6, 8), Number(hh), Number(mm), Number(ss), zone);
    const dmy = () =>
      fromParts(+ds.slice(4, 8), +ds.slice(2, 4), +ds.slice(0, 2), Number(hh), Number(mm), Number(ss), zone);
    return /^(19|20)\d{2}(0[1-9]|1[0-2])/.test(ds) ? (ymd() ?? dmy()) : (dmy() ?? ymd());
  }
  return undefined;
}

/** `HH:MM(:SS)`, `HHMM(SS)` or "" (midnight). */
function splitTime(ts: string): [string, string, string] {
  let m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?/.exec(ts);
  if (m) return [m[1] ?? "0", m[2] ?? "0", m[3] ?? "0"];
  m = /^(\d{2})(\d{2})(\d{2})?$/.exec(ts);
  if (m) return [m[1] ?? "0", m[2] ?? "0", m[3] ?? "0"];
  return ["0", "0", "0"];
}

/** Parses ISO 8601 keeping the wall time as written; without an offset it is read in `fallbackZone` (default UTC). */
export function parseIsoLocal(s: string, fallbackZone: CourierZone = 0): LocalTime | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(
    s.trim(),
  );
  if (!m) return parseNaive(s, "", fallbackZone);
  let zone = fallbackZone;
  if (m[7] === "Z") zone = 0;
  else if (m[7]) {
    const sign = m[7][0] === "-" ? -1 : 1;
    const digits = m[7].slice(1).replace(":", "");
    zone = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
  }
  return fromParts(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), +(m[6] ?? 0), zone);
}
