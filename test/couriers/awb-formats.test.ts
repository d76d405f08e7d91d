/**
 * AWB formats of every catalogue courier. Indian couriers get
 * real-world valid and invalid examples; international ones only check that
 * their current patterns accept their examples and refuse obvious garbage
 * (another engineer owns those lines).
 */
import { describe, expect, test } from "bun:test";
import { COURIERS, courierBySlug, normaliseTrackingNumber } from "../../src/modules/couriers/catalogue.ts";
import { scenarioDigit } from "../../src/twin-kit/scenario.ts";

/** slug → [valid, invalid] (already normalised: upper case, no spaces). */
const INDIA: Record<string, [string[], string[]]> = {
  delhivery: [
    ["26805710004060", "84209310000302", "12345678901"],
    ["1234567890", "123456789012345", "2680571000406A", "DL26805710004060"],
  ],
  bluedart: [
    ["44330038841", "50112345670", "12345678"],
    ["1234567", "443300388412", "4433003884A", "BD44330038841"],
  ],
  dtdc: [
    ["B32242001", "A15082271", "D12345670", "123456789", "123456789012"],
    ["B3224200", "BB32242001", "12345678", "1234567890123", "B322420011"],
  ],
  ecomexpress: [
    ["8012345670", "123456789", "123456789012"],
    ["12345678", "1234567890123", "E8012345670"],
  ],
  xpressbees: [
    ["141123221084922", "14123456789010", "123456789012", "1234567890123456"],
    ["12345678901", "12345678901234567", "XB141123221084922"],
  ],
  shadowfax: [
    ["SF1234567890", "SF123456789", "SF123456789012ABC1"],
    ["1234567890", "SF12345678", "XSF1234567890"],
  ],
  ekart: [
    ["FMPC1234567890", "FMPP0987654321"],
    ["FMP1234567890", "FMPC123456789", "1234567890"],
  ],
  indiapost: [
    ["EE123456780IN", "RM987654321IN", "CP000000000IN"],
    ["EE12345678IN", "EE123456780US", "E1234567890IN", "123456780IN"],
  ],
  amazonshipping: [
    ["TBA1234567890", "AMZ123456789", "ATS123456789012", "123456789"],
    ["TBX1234567890", "TBA12345678", "1234567890123"],
  ],
  smartr: [
    ["123456780", "123456789012"],
    ["12345678", "1234567890123", "S123456789"],
  ],
  gati: [
    ["1234567890", "123456789"],
    ["12345678", "12345678901", "G123456789"],
  ],
  professional: [
    ["BLR123456780", "DEL12345678", "MAA1234567890"],
    ["BL123456780", "BLR1234567", "BLR12345678901"],
  ],
  trackon: [
    ["100123456780", "123456789", "A12345678", "A12345678901"],
    ["12345678", "1234567890123", "AB12345678"],
  ],
  shreemaruti: [
    ["1234567890", "1234567890123456"],
    ["123456789", "12345678901234567", "M1234567890"],
  ],
};

const GARBAGE = ["", "HELLO", "!@#$%^&*()", "<SCRIPT>", "0", "ABC"];

describe("every catalogue example", () => {
  test.each(COURIERS.map((c) => [c.slug, c.awb.example, c.awb.pattern] as const))(
    "%s example %p matches its pattern and ends in digit 0 (sandbox delivered)",
    (_slug, example, pattern) => {
      expect(pattern.test(example)).toBe(true);
      expect(normaliseTrackingNumber(example)).toBe(example);
      expect(scenarioDigit(example)).toBe(0);
      // Examples of S10 numbers end in the country code; all others end in the digit 0 itself.
      expect(/0$|0[A-Z]{2}$/.test(example)).toBe(true);
    },
  );

  test("every pattern is anchored (a match never hides inside a longer string)", () => {
    for (const c of COURIERS) {
      expect(c.awb.pattern.source.startsWith("^")).toBe(true);
      expect(c.awb.pattern.source.endsWith("$")).toBe(true);
      expect(c.awb.pattern.test(`#${c.awb.example}#`)).toBe(false);
    }
  });

  test("every description is written for a 400 message", () => {
    for (const c of COURIERS) expect(c.awb.description.length).toBeGreaterThan(5);
  });

  test("every Indian catalogue courier has examples in this file", () => {
    expect(
      COURIERS.filter((c) => c.country === "india")
        .map((c) => c.slug)
        .sort(),
    ).toEqual(Object.keys(INDIA).sort());
  });
});

describe("Indian couriers: valid and invalid numbers", () => {
  for (const [slug, [valid, invalid]] of Object.entries(INDIA)) {
    test(`${slug}`, () => {
      const c = courierBySlug(slug)!;
      expect(c).toBeDefined();
      for (const v of valid) expect([v, c.awb.pattern.test(v)]).toEqual([v, true]);
      for (const v of [...invalid, ...GARBAGE]) expect([v, c.awb.pattern.test(v)]).toEqual([v, false]);
    });
  }

  test("India Post is UPU S10: [A-Z]{2}\\d{9}IN", () => {
    expect(courierBySlug("indiapost")!.awb.pattern.source).toBe("^[A-Z]{2}\\d{9}IN$");
  });

  test("numbers as customers type them normalise into the format", () => {
    expect(courierBySlug("indiapost")!.awb.pattern.test(normaliseTrackingNumber(" ee 123 456 780 in "))).toBe(true);
    expect(courierBySlug("dtdc")!.awb.pattern.test(normaliseTrackingNumber("b-3224-2001"))).toBe(true);
    expect(courierBySlug("bluedart")!.awb.pattern.test(normaliseTrackingNumber("4433 0038 841"))).toBe(true);
  });
});

describe("international couriers: current patterns accept their examples and refuse garbage", () => {
  test.each(COURIERS.filter((c) => c.country === "international").map((c) => [c.slug] as const))("%s", (slug) => {
    const c = courierBySlug(slug)!;
    expect(c.awb.pattern.test(c.awb.example)).toBe(true);
    for (const g of [...GARBAGE, "1", "12345", "1".repeat(40), `${c.awb.example}!`, `${c.awb.example} `])
      expect([g, c.awb.pattern.test(g)]).toEqual([g, false]);
  });
});
