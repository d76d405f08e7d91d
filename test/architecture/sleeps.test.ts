/**
 * Tests do not depend on machine speed (docs/architecture.md, "Time in tests"): they wait for an event
 * (test/helpers/eventually.ts, a gate, a log line) or move the fake clock (src/lib/clock.ts), never sleep a fixed
 * time and then assert, never bound a measured time. Every timer left in test/ (helpers included) and in a courier
 * folder's test — a call, `Bun.sleep` passed on, a `timers/promises` or `bun` sleep import — is counted against the
 * list below, each with why it is not a sleep-then-assert; a new one fails here, and so does a stale entry.
 */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const SELF = relative(ROOT, import.meta.path);

/** Timer calls per file, and why each is legitimate. Shrink it freely; add to it only with a reason of this kind. */
const ALLOWED: Readonly<Record<string, { timers: number; why: string }>> = {
  "src/modules/couriers/carriers/track17/track17.test.ts": {
    timers: 1,
    why: "the real sleep handed to the adapter as its poll pause; no assertion waits on it",
  },
  "test/client/receivers-polyglot.test.ts": { timers: 1, why: "polls a receiver process until it listens" },
  "test/client/service.ts": { timers: 1, why: "polls a started service's /healthz until it answers (deadline)" },
  "test/couriers/http.test.ts": {
    timers: 2,
    why: "the hostile backend itself: a body dripped a byte per 200 ms, an answer 5 s after the client's 800 ms timeout",
  },
  "test/db/request-deadline.test.ts": {
    timers: 1,
    why: "one event-loop turn inside the deadline's scope: the scope must survive an await (the subject)",
  },
  "test/e2e/kill9.test.ts": { timers: 2, why: "poll loops: the killed process gone, the row delivered (deadlines)" },
  "test/e2e/live-webhook.test.ts": { timers: 1, why: "polls the receiver for the delivered event (deadline)" },
  "test/e2e/recover.test.ts": { timers: 1, why: "its until() poll loop (deadline)" },
  "test/helpers/courier.ts": {
    timers: 1,
    why: "the real sleep handed to an adapter as its poll pause; no assertion waits on it",
  },
  "test/helpers/eventually.ts": { timers: 1, why: "eventually()'s poll pause (deadline): the helper to wait with" },
  "test/following/outage.test.ts": { timers: 3, why: "poll loops for the back-off line, the resumed call, the lease" },
  "test/http/request-deadline.test.ts": {
    timers: 1,
    why: "a slow receiver's own pacing: it answers after the request deadline, which the test fire must outlast",
  },
  "test/lib/log.test.ts": {
    timers: 2,
    why: "timers are the subject (the request scope follows a timer); each is awaited, no assertion races it",
  },
  "test/ops/crash-preload.ts": {
    timers: 2,
    why: "preloaded into a child: polls /readyz, then throws from a timer (the crash under test)",
  },
  "test/ops/flapping-database.test.ts": {
    timers: 5,
    why: "load and fault schedule (client pacing, outage lengths), a poll loop, and the client honouring Retry-After",
  },
  "test/ops/operator-errors.test.ts": { timers: 1, why: "the slow client itself: one body byte every 100 ms" },
  "test/ops/process.ts": {
    timers: 2,
    why: "waitForLine's poll loop; a bound on reading a dead child's pipes (a grandchild may hold them)",
  },
  "test/ops/scale-out.test.ts": {
    timers: 4,
    why: "poll loops (readiness, burst, settle) and a receiver that holds deliveries so a killed worker has some in flight",
  },
  "test/ops/sequence-workers.test.ts": { timers: 1, why: "polls pg_locks until both workers wait at the barrier" },
  "test/ops/tracing.test.ts": { timers: 1, why: "polls the sandbox until the shipment changes (bounded loop)" },
  "test/upgrade/upgrade.test.ts": { timers: 1, why: "its until() poll loop (deadline)" },
  "test/webhooks/receiver.ts": { timers: 1, why: "waitFor()'s deadline: rejects when requests never come" },
};

/**
 * A timer: `Bun.sleep`/`sleepSync` called or passed on, `setTimeout`/`setInterval` called, `Atomics.wait`, a sleep
 * imported from `bun` or `timers/promises` (under any name).
 */
const TIMER =
  /\bBun\.sleep(?:Sync)?\b|\b(?:setTimeout|setInterval)\s*\(|\bAtomics\.wait(?:Async)?\b|from\s*["'](?:node:)?timers\/promises["']|\bimport\s*\{[^}]*\bsleep(?:Sync)?\b[^}]*\}\s*from\s*["']bun["']/g;
/** An upper bound on a measured time: `expect(ms).toBeLessThan(…)`, `expect(performance.now() - t0)…`, `expect(r.s)…`. */
const WALL_CLOCK_BOUND =
  /expect\((?=[^;]*?(?:performance\.now\(\)|Date\.now\(\)|\b(?:ms|elapsed|took|seconds|duration\w*)\b|\.s\)))[^;]*?\)\.toBeLessThan(?:OrEqual)?\(/;
/** A reading of the real clock. */
const CLOCK_READING = /performance\.now\(\)|Date\.now\(\)|Bun\.nanoseconds\(\)|process\.hrtime/;
/** A comparison that bounds a value from either side. */
const COMPARISON = /\.toBe(?:LessThan|GreaterThan)(?:OrEqual)?\(|\.toBeCloseTo\(/;

/** Measured times in files that are allowed one, and why the bound cannot fail on a slow or loaded machine. */
const ALLOWED_MEASURED: Readonly<Record<string, { bounds: number; why: string }>> = {
  "test/couriers/budget.test.ts": {
    bounds: 1,
    why: "a rate over a real window: the bound grows with the measured span, so a slow machine only loosens it",
  },
};

/** The source without `//` comments (a comment may name a timer). */
const code = (text: string) =>
  text
    .split("\n")
    .map((l) => l.replace(/(^|\s)\/\/.*$/, ""))
    .join("\n");

function timerCalls(text: string): number {
  return code(text).match(TIMER)?.length ?? 0;
}

function wallClockBounds(text: string): string[] {
  return code(text)
    .split("\n")
    .filter((l) => WALL_CLOCK_BOUND.test(l))
    .map((l) => l.trim());
}

/**
 * Comparisons of a measured time: an `expect` line that bounds an elapsed time (a clock reading minus an earlier one,
 * `performance.now() - t0`), or a value computed from one (`took = …`, `rate = n / took`, followed through
 * assignments). A reading used as an instant (`Date.now() + 20_000`) is no measured time.
 */
function measuredBounds(text: string): string[] {
  // String literals out: `budget("bound:test")` names no variable.
  const lines = code(text)
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""')
    .split("\n");
  const assignments = lines.flatMap((l) =>
    [...l.matchAll(/\b(\w+)\s*[-+*/]?=(?![=>])\s*([^;]*)/g)].map(([, name, value]) => ({
      name: name ?? "",
      value: value ?? "",
    })),
  );
  const word = (names: Iterable<string>) => [...names].map((n) => `\\b${n}\\b`).join("|") || "(?!)";
  // Readings kept for later: `t0 = performance.now()`, `callsAt.push(performance.now())`.
  const readings = new Set(assignments.filter((a) => CLOCK_READING.test(a.value)).map((a) => a.name));
  for (const m of text.matchAll(/\b(\w+)\.push\((?:[^()]|\([^()]*\))*?(?:performance\.now|Date\.now)\(\)/g))
    readings.add(m[1] ?? "");
  const elapsed = new RegExp(`-\\s*\\(?\\s*(?:${CLOCK_READING.source}|${word(readings)})`);
  const measured = new Set<string>();
  const isMeasured = (l: string) => elapsed.test(l) || new RegExp(word(measured)).test(l);
  for (let grew = true; grew; ) {
    grew = false;
    for (const a of assignments)
      if (!measured.has(a.name) && isMeasured(a.value)) {
        measured.add(a.name);
        grew = true;
      }
  }
  return lines.filter((l) => /\bexpect\(/.test(l) && COMPARISON.test(l) && isMeasured(l)).map((l) => l.trim());
}

function testFiles(): { file: string; text: string }[] {
  return [...new Glob("test/**/*.{ts,mjs,js}").scanSync(ROOT), ...new Glob("src/**/*.test.ts").scanSync(ROOT)]
    .filter((f) => !f.startsWith("test/architecture/fixtures/") && f !== SELF)
    .sort()
    .map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
}

describe("tests wait for events, not for time", () => {
  const files = testFiles();

  test("every timer in test/ is on the list, with its count; every entry still holds", () => {
    const found = Object.fromEntries(files.map((f) => [f.file, timerCalls(f.text)]).filter(([, n]) => n !== 0));
    const allowed = Object.fromEntries(Object.entries(ALLOWED).map(([f, a]) => [f, a.timers]));
    // A new fixed sleep: wait for the event instead (eventually(), a gate, a log line) or move the fake clock.
    expect(found).toEqual(allowed);
  });

  test("no test asserts that something took under a wall-clock bound", () => {
    const bounds = files.flatMap((f) => wallClockBounds(f.text).map((l) => `${f.file}: ${l}`));
    // Assert the deadline the code was given (its error names it, a constant, the fake clock) instead.
    expect(bounds).toEqual([]);
  });

  test("no test bounds a time it measured on the real clock, but where the list says why it cannot fail", () => {
    const found = Object.fromEntries(
      files.map((f) => [f.file, measuredBounds(f.text).length] as const).filter(([, n]) => n !== 0),
    );
    const allowed = Object.fromEntries(Object.entries(ALLOWED_MEASURED).map(([f, a]) => [f, a.bounds]));
    // Give the code a fake clock (src/lib/clock.ts, or the `now` it takes) and assert on that instead.
    expect(found).toEqual(allowed);
  });

  test("the checks find a sleep, a timer, a took-under bound, and skip comments and other bounds", () => {
    const sample = [
      "await Bun.sleep(200);",
      "setTimeout(() => done(), 5);",
      "// await Bun.sleep(1_000) in a comment",
      "expect(res.ms).toBeLessThan(5_000);",
      "expect(performance.now() - t0).toBeLessThanOrEqual(100);",
      "expect(r.s).toBeLessThan(5);",
      "expect(RATE_WINDOW_MS).toBeLessThan(1_000);",
      "expect(rows.length).toBeLessThan(10);",
    ].join("\n");
    expect(timerCalls(sample)).toBe(2);
    expect(wallClockBounds(sample)).toEqual([
      "expect(res.ms).toBeLessThan(5_000);",
      "expect(performance.now() - t0).toBeLessThanOrEqual(100);",
      "expect(r.s).toBeLessThan(5);",
    ]);
  });

  test("the checks find a sleep by another name and a bound on a time measured into any variable", () => {
    const sample = [
      "const pause = Bun.sleep;",
      'import { setTimeout as delay } from "node:timers/promises";',
      'import { sleep } from "bun";',
      "let timer: ReturnType<typeof setInterval> | undefined;",
      "const start = Date.now();",
      "const t0 = performance.now();",
      "await work();",
      "const took = performance.now() - t0;",
      "const rate = n / took;",
      "expect(rate).toBeGreaterThan(100);",
      "expect(Date.now() - start).toBeLessThan(50);",
      "const now = clock.now();",
      "expect(row.at).toBeLessThanOrEqual(now);",
      "expect(rows.length).toBeLessThan(10);",
      "expect(took).toBeDefined();",
    ].join("\n");
    expect(timerCalls(sample)).toBe(3);
    expect(measuredBounds(sample)).toEqual([
      "expect(rate).toBeGreaterThan(100);",
      "expect(Date.now() - start).toBeLessThan(50);",
    ]);
  });
});
