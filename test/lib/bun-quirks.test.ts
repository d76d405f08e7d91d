/**
 * The Bun behaviour src/lib/bun-quirks.ts works around, and the workaround. When the first test fails, Bun's
 * TracingChannel has Node's `hasSubscribers` (https://github.com/oven-sh/bun/issues/27805): delete the quirks file.
 */
import { describe, expect, test } from "bun:test";
import diagnostics from "node:diagnostics_channel";
import { createLogger } from "../../src/lib/log.ts";

describe("Bun's TracingChannel", () => {
  test("has no hasSubscribers of its own (upstream behaviour)", () => {
    const out = Bun.spawnSync([
      "bun",
      "-e",
      "console.log(require('node:diagnostics_channel').tracingChannel('t').hasSubscribers)",
    ]);
    expect(out.stdout.toString().trim()).toBe("undefined");
  });

  test("with the workaround: false without subscribers, true with one, false again after", () => {
    const channel = diagnostics.tracingChannel("quirk:test");
    expect(channel.hasSubscribers).toBe(false);
    const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
    channel.subscribe(handlers);
    expect(channel.hasSubscribers).toBe(true);
    channel.unsubscribe(handlers);
    expect(channel.hasSubscribers).toBe(false);
  });

  test("pino's lines still reach a subscriber of its channel, and still go out without one", () => {
    const lines: string[] = [];
    const log = createLogger("info", {}, (l) => lines.push(l));
    const seen: unknown[] = [];
    const handlers = { start: (m: unknown) => void seen.push(m), end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
    const channel = diagnostics.tracingChannel("pino_asJson");
    channel.subscribe(handlers);
    log.info("traced");
    channel.unsubscribe(handlers);
    log.info("untraced");
    expect(seen).toHaveLength(1);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["traced", "untraced"]);
  });
});
