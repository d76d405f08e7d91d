import { describe, expect, test } from "bun:test";
import { parseIsoLocal, parseNaive, toSpecDate } from "../../src/modules/couriers/adapters/time.ts";

describe("courier time formats", () => {
  test.each([
    ["2024-09-22T09:25:10.124", "", "2024-09-22", "09:25", "2024-09-22T03:55:10.000Z"],
    ["05112026", "1020", "2026-11-05", "10:20", "2026-11-05T04:50:00.000Z"], // DTDC DDMMYYYY + HHMM, IST
    ["20112026", "0815", "2026-11-20", "08:15", "2026-11-20T02:45:00.000Z"], // DDMMYYYY that starts like a year
    ["05-Nov-2026", "14:05", "2026-11-05", "14:05", "2026-11-05T08:35:00.000Z"], // Blue Dart
    ["05 Nov, 2026, 10:20", "", "2026-11-05", "10:20", "2026-11-05T04:50:00.000Z"], // Ecom Express
  ])("IST naive %p %p", (d, t, date, time, at) => {
    expect(parseNaive(d, t)).toEqual({ localDate: date, localTime: time, at });
  });

  test("UPS YYYYMMDD + HHMMSS at a given offset", () => {
    expect(parseNaive("20220126", "143015", 0)).toEqual({ localDate: "2022-01-26", localTime: "14:30", at: "2022-01-26T14:30:15.000Z" });
  });

  test("ISO with an offset keeps the wall time written", () => {
    expect(parseIsoLocal("2026-11-05T10:20:30-05:00")).toEqual({ localDate: "2026-11-05", localTime: "10:20", at: "2026-11-05T15:20:30.000Z" });
  });

  test("garbage is undefined, never a bogus date", () => {
    for (const s of ["", "yesterday", "2026-13-01T00:00", "99999999", "32-Jan-2026"]) expect(parseNaive(s)).toBeUndefined();
  });

  test("spec Date format DD-Mon-YYYY", () => {
    expect(toSpecDate("2026-11-05")).toBe("05-Nov-2026");
  });
});
