import { describe, expect, test } from "bun:test";
import { ddMonYyyy, toSpecDate, toSpecTime } from "../../src/domain/dates.ts";

describe("checkpoint dates and times in the spec's spelling", () => {
  test("spec Date format DD-Mon-YYYY", () => {
    expect(toSpecDate("2026-11-05")).toBe("05-Nov-2026");
    expect(toSpecDate("2026-09-30")).toBe("30-Sep-2026");
    expect(toSpecDate("2028-02-29")).toBe("29-Feb-2028");
  });

  test("a string that is not a calendar date passes through unchanged", () => {
    for (const s of ["", "2026-02-31", "05-Nov-2026", "soon"]) expect(toSpecDate(s)).toBe(s);
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
