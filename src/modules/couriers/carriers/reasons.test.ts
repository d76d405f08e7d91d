/** Every row of every courier's failed-attempt (NDR) table maps its example to its reason (docs/ndr.md). */
import { describe, expect, test } from "bun:test";
import { REASON_CODES } from "../../../domain/ndr.ts";
import { reasonOf } from "../adapters/reasons.ts";
import { REASON_TABLES } from "../reasons.ts";

for (const [id, table] of Object.entries(REASON_TABLES)) {
  describe(`${id} reason table`, () => {
    test("has rows, each with a source", () => {
      expect(table.rows.length).toBeGreaterThan(0);
      for (const r of table.rows) expect(r.source.length).toBeGreaterThan(5);
    });
    for (const row of table.rows)
      test(`${row.code ?? "remark"} "${row.example.remark ?? row.example.activity}" → ${row.reason}`, () => {
        expect(REASON_CODES).toContain(row.reason);
        expect(reasonOf(table, row.example)).toEqual({ reason: row.reason, mapped: true });
      });
  });
}

describe("reasonOf", () => {
  const table = REASON_TABLES.delhivery;
  test("a checkpoint that is not an exception has no reason", () => {
    expect(
      reasonOf(table, {
        state: "in_transit",
        subStatus: null,
        rawCode: "EOD-11",
        activity: "Consignee not available",
        remark: null,
      }).reason,
    ).toBe("");
  });
  test("return-to-origin steps carry no reason", () => {
    expect(
      reasonOf(table, {
        state: "exception",
        subStatus: "rto_initiated",
        rawCode: null,
        activity: "Return to origin initiated after failed attempts",
        remark: null,
      }).reason,
    ).toBe("");
  });
  test("an unknown remark is other, unmapped", () => {
    expect(
      reasonOf(table, {
        state: "exception",
        subStatus: "held",
        rawCode: "ZZ",
        activity: "Shipment on hold: see remarks",
        remark: "Awaiting instructions",
      }),
    ).toEqual({ reason: "other", mapped: false });
  });
  test("the remark wins over the code (the courier's words for this event)", () => {
    expect(
      reasonOf(table, {
        state: "exception",
        subStatus: "delivery_attempt_failed",
        rawCode: "EOD-11",
        activity: "Pending",
        remark: "COD amount not ready",
      }).reason,
    ).toBe("cod_not_ready");
  });
});
