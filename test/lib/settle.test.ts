import { expect, test } from "bun:test";
import { settleWithin } from "../../src/lib/settle.ts";

test("true when the work settles in time, rejections included; false on timeout or a spent grace period", async () => {
  expect(await settleWithin(Promise.resolve(1), 1_000)).toBe(true);
  expect(await settleWithin(Promise.reject(new Error("x")), 1_000)).toBe(true);
  expect(await settleWithin([Promise.resolve(), Promise.reject(new Error("y"))], 1_000)).toBe(true);
  expect(await settleWithin(new Promise(() => {}), 20)).toBe(false);
  expect(await settleWithin([Promise.resolve(), new Promise(() => {})], 20)).toBe(false);
  expect(await settleWithin(Promise.resolve(), 0)).toBe(false);
});
