import { describe, expect, test } from "bun:test";
import { estimateDate } from "../../src/modules/couriers/adapters/kit.ts";
import { IST_ZONE, parseIsoLocal, parseNaive } from "../../src/modules/couriers/adapters/time.ts";

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
    expect(parseNaive("20220126", "143015", 0)).toEqual({
      localDate: "2022-01-26",
      localTime: "14:30",
      at: "2022-01-26T14:30:15.000Z",
    });
  });

  test("ISO with an offset keeps the wall time written", () => {
    expect(parseIsoLocal("2026-11-05T10:20:30-05:00")).toEqual({
      localDate: "2026-11-05",
      localTime: "10:20",
      at: "2026-11-05T15:20:30.000Z",
    });
  });

  test("garbage is undefined, never a bogus date", () => {
    for (const s of ["", "yesterday", "2026-13-01T00:00", "99999999", "32-Jan-2026"])
      expect(parseNaive(s)).toBeUndefined();
  });

  test.each([
    ["2026-02-31T10:00:00", ""], // ISO-like naive
    ["31-Feb-2026", "10:00"], // Blue Dart
    ["31022026", "1000"], // DTDC DDMMYYYY
    ["20260231", "100000"], // UPS YYYYMMDD
    ["31 Feb, 2026, 10:00", ""], // Ecom Express
    ["2026-04-31", "09:00"], // April has 30 days
    ["29-Feb-2026", "09:00"], // 2026 is not a leap year
    ["2026-11-05", "24:00"], // no hour 24
  ])("a date the calendar does not have is rejected, not rolled over: %p %p", (d, t) => {
    expect(parseNaive(d, t)).toBeUndefined();
  });

  test("31-Feb with an offset is rejected too (not read as 3-Mar)", () => {
    expect(parseIsoLocal("2026-02-31T10:20:30+05:30")).toBeUndefined();
    expect(parseIsoLocal("2026-02-31T10:20:30Z")).toBeUndefined();
  });

  test("29-Feb of a leap year is a real date", () => {
    expect(parseNaive("29-Feb-2028", "10:00")).toEqual({
      localDate: "2028-02-29",
      localTime: "10:00",
      at: "2028-02-29T04:30:00.000Z",
    });
  });

  test("naive times can be read in a named zone: 2 a.m. in New York before and after the DST change", () => {
    expect(parseNaive("2026-03-07 02:30", "", "America/New_York")?.at).toBe("2026-03-07T07:30:00.000Z"); // EST, UTC-5
    expect(parseNaive("2026-03-09 02:30", "", "America/New_York")?.at).toBe("2026-03-09T06:30:00.000Z"); // EDT, UTC-4
  });

  test("an eight-digit date that is no calendar date in either reading is undefined", () => {
    expect(parseNaive("31312026", "1000")).toBeUndefined();
  });
});

describe("estimateDate (a courier's EDD as a calendar date)", () => {
  test.each([
    ["2024-04-25T23:30:00-07:00", 0, "2024-04-25"], // its own offset's date, not the UTC one (the 26th)
    ["2024-09-24T23:59:59", IST_ZONE, "2024-09-24"],
    ["2018-08-03T00:00:00Z", 0, "2018-08-03"],
    ["2024-09-24", 0, "2024-09-24"],
    ["20220127", 0, "2022-01-27"],
    ["09 June 2012", IST_ZONE, "2012-06-09"],
    ["05-Nov-2026", IST_ZONE, "2026-11-05"],
    ["0001-01-01T00:00:00", 0, null], // .NET DateTime.MinValue
    ["1900-01-01", 0, null], // SQL Server's empty date
    ["2026-02-31", 0, null],
    ["soon", 0, null],
    ["", 0, null],
  ] as const)("%p (zone %p) → %p", (v, zone, want) => {
    expect(estimateDate(v, zone)).toBe(want);
  });

  test("non-text values are no date", () => {
    for (const v of [null, undefined, {}, [], true, 20220127.5]) expect(estimateDate(v)).toBeNull();
  });
});
