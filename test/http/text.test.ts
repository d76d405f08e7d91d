/**
 * `Text` (src/http/text.ts): string lengths in characters (code points), as JSON Schema counts them, in our
 * checks and in Elysia's. The first test is the sentinel of the workaround: it fails when TypeBox counts code
 * points itself, and then `Text` can become `Type.String` again.
 */
import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { Elysia, t } from "elysia";
import { charCount, dateTimeMs, Text, textProblem } from "../../src/http/text.ts";

const EMOJI = "📦";

describe("upstream", () => {
  test("TypeBox's own String still counts UTF-16 units (when this fails, drop Text for Type.String)", () => {
    const plain = Type.String({ maxLength: 64 });
    expect(TypeCompiler.Compile(plain).Check(EMOJI.repeat(33))).toBe(false);
    expect(Value.Check(plain, EMOJI.repeat(33))).toBe(false);
  });
});

describe("Text", () => {
  test("counts code points: 64 emoji pass a 64-character limit, 65 do not; a lone surrogate counts one", () => {
    const s = Text({ minLength: 2, maxLength: 64 });
    const c = TypeCompiler.Compile(s);
    expect([
      c.Check(EMOJI.repeat(33)),
      c.Check(EMOJI.repeat(64)),
      c.Check(EMOJI.repeat(65)),
      c.Check(EMOJI),
      c.Check("ab"),
    ]).toEqual([true, true, false, false, true]);
    expect([charCount(EMOJI.repeat(3)), charCount("a\ud800b"), charCount("\udc00\ud800"), charCount("")]).toEqual([
      3, 3, 2, 0,
    ]);
    expect(Value.Check(s, EMOJI.repeat(64))).toBe(true);
  });

  test("pattern (Unicode mode) and format, and which rule failed", () => {
    const s = Text({ maxLength: 3, pattern: "^[a-z📦]*$" });
    expect([textProblem(s, 5), textProblem(s, "abcd"), textProblem(s, "A"), textProblem(s, "a📦b")]).toEqual([
      "type",
      "maxLength",
      "pattern",
      undefined,
    ]);
    expect(() => Text({ pattern: "[" })).toThrow(SyntaxError);
  });

  test("date-time is RFC 3339's: a date alone, a date in prose, a 30th of February or a second 60 off 23:59 UTC are not", () => {
    const s = Text({ format: "date-time" });
    const ok = [
      "2026-11-05T10:00:00Z",
      "2026-11-05t10:00:00.123z",
      "2026-11-05T10:00:00+05:30",
      "2024-02-29T00:00:00Z",
      "2026-11-05 10:00:00Z",
      // Leap seconds (section 5.6 allows second 60; section 5.7: at 23:59:60 UTC, in any offset).
      "2016-12-31T23:59:60Z",
      "2016-12-31T23:59:60.5Z",
      "2017-01-01T05:29:60+05:30",
      "2016-12-31T15:59:60-08:00",
    ];
    const bad = [
      "2026-11-05",
      "Thu Nov 05 2026 10:00:00 GMT+0000 (UTC)",
      "x 2026-11-05T10:00:00Z",
      "2026-02-30T10:00:00Z",
      "2026-11-05T10:00:60Z",
      "2026-11-05T23:58:60Z",
      "2026-11-05T23:59:60+05:30",
      "2026-11-05T23:59:61Z",
      "2026-11-05T10:00Z",
      "2026-11-05T10:00:00",
    ];
    expect(ok.map((v) => textProblem(s, v))).toEqual(ok.map(() => undefined));
    expect(bad.map((v) => textProblem(s, v))).toEqual(bad.map(() => "format"));
  });

  test("dateTimeMs reads a leap second as the last millisecond of its minute; other instants as Date.parse does", () => {
    const last = Date.parse("2016-12-31T23:59:59.999Z");
    expect(
      ["2016-12-31T23:59:60Z", "2016-12-31T23:59:60.25Z", "2017-01-01T05:29:60+05:30"].map((v) => dateTimeMs(v)),
    ).toEqual([last, last, last]);
    expect(dateTimeMs("2026-11-05T10:00:00.123+05:30")).toBe(Date.parse("2026-11-05T04:30:00.123Z"));
    expect(["2026-11-05T10:00:60Z", "yesterday", "2026-02-30T10:00:00Z"].map((v) => dateTimeMs(v))).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  test("renders as a plain JSON Schema string", () => {
    expect(JSON.parse(JSON.stringify(Text({ minLength: 1, maxLength: 5, pattern: "^x", description: "d" })))).toEqual({
      minLength: 1,
      maxLength: 5,
      pattern: "^x",
      description: "d",
      type: "string",
    });
  });

  test("Elysia's own validation of a route uses it (33 emoji in a 64-character query value pass)", async () => {
    const app = new Elysia().get("/x", ({ query }) => query.q.length, {
      query: t.Object({ q: Text({ maxLength: 64 }) }),
    });
    const ok = await app.handle(new Request(`http://localhost/x?q=${encodeURIComponent(EMOJI.repeat(33))}`));
    const long = await app.handle(new Request(`http://localhost/x?q=${encodeURIComponent(EMOJI.repeat(65))}`));
    expect([ok.status, await ok.text(), long.status]).toEqual([200, "66", 422]);
  });
});
