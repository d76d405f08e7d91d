import { describe, expect, test } from "bun:test";
import { DateTime } from "luxon";
import { ddMonYyyy, toSpecDate, toSpecTime } from "../../src/domain/dates.ts";

/** The reference: Luxon's calendar, parsing `yyyy-MM-dd` and formatting `dd-LLL-yyyy` in English. */
function luxonSpecDate(s: string): string {
  const dt = DateTime.fromFormat(s, "yyyy-MM-dd", { zone: "UTC", locale: "en-US" });
  return dt.isValid ? dt.toFormat("dd-LLL-yyyy") : s;
}

describe("checkpoint dates and times in the spec's spelling", () => {
  test("spec Date format DD-Mon-YYYY", () => {
    expect(toSpecDate("2026-11-05")).toBe("05-Nov-2026");
    expect(toSpecDate("2026-09-30")).toBe("30-Sep-2026");
    expect(toSpecDate("2028-02-29")).toBe("29-Feb-2028");
  });

  test("a string that is not a calendar date passes through unchanged", () => {
    for (const s of ["", "2026-02-31", "05-Nov-2026", "soon"]) expect(toSpecDate(s)).toBe(s);
  });

  test("agrees with Luxon's calendar on every day of leap, century and ordinary years, and on near-misses", () => {
    const inputs: string[] = [];
    const p = (n: number, w: number) => String(n).padStart(w, "0");
    for (const y of [0, 1, 99, 100, 400, 1600, 1900, 2000, 2023, 2024, 2025, 2026, 2028, 2100, 2400, 9999])
      for (let m = 0; m <= 13; m++) for (let d = 0; d <= 32; d++) inputs.push(`${p(y, 4)}-${p(m, 2)}-${p(d, 2)}`);
    inputs.push(
      "2026-1-05",
      "2026-01-5",
      "26-01-05",
      " 2026-01-05",
      "2026-01-05 ",
      "2026-01-05T00:00",
      "2026/01/05",
      "20260105",
      "2026-0a-05",
      "२०२६-०१-०५",
      "+2026-01-05",
      "2026--1-05",
    );
    const differ = inputs.filter((s) => toSpecDate(s) !== luxonSpecDate(s));
    expect(differ).toEqual([]);
    // The comparison is not vacuous: both real dates and refusals occur.
    expect(inputs.filter((s) => toSpecDate(s) !== s).length).toBeGreaterThan(5000);
    expect(inputs.filter((s) => toSpecDate(s) === s).length).toBeGreaterThan(1000);
  });

  test("an ISO instant gives the date it starts with; anything else passes through", () => {
    expect(ddMonYyyy("2026-11-05T23:30:00Z")).toBe("05-Nov-2026");
    expect(ddMonYyyy("2026-11-05 10:00:00+00")).toBe("05-Nov-2026");
    expect(ddMonYyyy("not a date")).toBe("not a date");
  });

  test("Time is HH:MM, 24 h: seconds are dropped, a missing time is empty", () => {
    expect(toSpecTime("14:05:59")).toBe("14:05");
    expect(toSpecTime("09:30")).toBe("09:30");
    expect(toSpecTime(null)).toBe("");
    expect(toSpecTime(undefined)).toBe("");
  });
});
