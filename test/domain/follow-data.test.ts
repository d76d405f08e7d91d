/** The metadata patch of a follow (src/domain/follow-data.ts): set, remove, keep, and no key is special. */
import { describe, expect, test } from "bun:test";
import { applyMetadataPatch } from "../../src/domain/follow-data.ts";

describe("applyMetadataPatch", () => {
  test("a string sets, null removes, an absent key stays; the current object is untouched", () => {
    const current = { a: "1", b: "2" };
    expect(applyMetadataPatch(current, { a: null, c: "3", b: "20" })).toEqual({ b: "20", c: "3" });
    expect(current).toEqual({ a: "1", b: "2" });
    expect(applyMetadataPatch({}, { gone: null })).toEqual({});
  });

  test("a key spelled __proto__ (the key pattern allows it) is stored as a key, never as a prototype", () => {
    const patch = JSON.parse('{"__proto__": "x", "constructor": "y"}');
    const out = applyMetadataPatch({}, patch);
    expect(Object.keys(out).sort()).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(applyMetadataPatch(out, JSON.parse('{"__proto__": null}')))).toBe('{"constructor":"y"}');
  });
});
