import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../helpers/eventually.ts";
import { createLogger, runInRequestScope, type LogLevel, type RequestScope } from "../../src/lib/log.ts";

function capture(level: LogLevel = "debug", base: Record<string, unknown> = {}) {
  const lines: string[] = [];
  const log = createLogger(level, base, (l) => void lines.push(l));
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("logger (pino)", () => {
  test("one JSON object per line: level label, ISO time, base, fields, msg", () => {
    const { log, lines, records } = capture("info", { service: "courier-tracking-api" });
    log.info("re-check drain", { claimed: 3 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    const [r] = records();
    expect(r).toMatchObject({ level: "info", service: "courier-tracking-api", claimed: 3, msg: "re-check drain" });
    expect(new Date(String(r!.time)).toISOString()).toBe(String(r!.time));
  });

  test("the configured level filters; silent writes nothing", () => {
    const warn = capture("warn");
    warn.log.debug("d");
    warn.log.info("i");
    warn.log.warn("w");
    warn.log.error("e");
    expect(warn.records().map((r) => r.level)).toEqual(["warn", "error"]);
    const silent = capture("silent");
    silent.log.error("nothing");
    expect(silent.lines).toEqual([]);
  });

  test("enabled(level) says whether a line at that level would be written", () => {
    const warn = capture("warn").log;
    expect((["debug", "info", "warn", "error"] as const).map((l) => warn.enabled(l))).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect(warn.child({ component: "x" }).enabled("info")).toBe(false);
    const silent = capture("silent").log;
    expect(silent.enabled("error")).toBe(false);
    expect(capture("debug").log.enabled("debug")).toBe(true);
  });

  test("child loggers add their fields to every line", () => {
    const { log, records } = capture();
    log.child({ component: "scheduler", job: "recheck" }).warn("job failed; backing off", { ms: 500 });
    expect(records()[0]).toMatchObject({
      component: "scheduler",
      job: "recheck",
      ms: 500,
      msg: "job failed; backing off",
    });
  });

  test("secrets are redacted by path: top level, one object down, request headers", () => {
    const { log, lines } = capture();
    log.info("x", {
      password: "hunter2",
      api_key: "ck_live_abc",
      config: { client_secret: "s3cr3t", port: 8080 },
      req: { headers: { authorization: "Bearer tok_123", cookie: "sid=abc", accept: "application/json" } },
    });
    const line = lines[0]!;
    for (const secret of ["hunter2", "ck_live_abc", "s3cr3t", "tok_123", "sid=abc"]) expect(line).not.toContain(secret);
    const r = JSON.parse(line);
    expect(r.password).toBe("[redacted]");
    expect(r.config).toEqual({ client_secret: "[redacted]", port: 8080 });
    expect(r.req.headers).toEqual({ authorization: "[redacted]", cookie: "[redacted]", accept: "application/json" });
  });

  test("an error field is {name, message, code}: no stack frames", () => {
    const { log, lines, records } = capture();
    const e = Object.assign(new TypeError("boom"), { code: "E_BOOM" });
    log.error("failed", { error: e });
    expect(records()[0]!.error).toEqual({ name: "TypeError", message: "boom", code: "E_BOOM" });
    expect(lines[0]).not.toContain("at ");
    expect(lines[0]).not.toContain("log.test.ts");
  });

  test("a failed query logs its driver cause, never the SQL or its parameters", () => {
    const { log, lines, records } = capture();
    const cause = Object.assign(new Error('relation "x" does not exist'), { name: "PostgresError", code: "42P01" });
    const e = Object.assign(new Error("Failed query: select secret from accounts where email = $1\nparams: a@b.c"), {
      name: "DrizzleQueryError",
      cause,
    });
    log.warn("query", { error: e });
    expect(records()[0]!.error).toEqual({
      name: "PostgresError",
      message: 'relation "x" does not exist',
      code: "42P01",
    });
    expect(lines[0]).not.toContain("select");
    expect(lines[0]).not.toContain("a@b.c");
  });

  test("errors under any key are reduced the same way", () => {
    const { log, records } = capture();
    log.error("x", { cause: new Error("inner") });
    expect(records()[0]!.cause).toEqual({ name: "Error", message: "inner" });
  });
});

describe("request scope", () => {
  test("lines logged in a request's scope, awaited work included, carry its id until the scope closes", async () => {
    const { log, records } = capture();
    const scope: RequestScope = { id: "req_a", open: true };
    let later!: Promise<void>;
    await runInRequestScope(
      scope,
      async () => {
        log.info("at once");
        await Bun.sleep(1);
        log.child({ component: "x" }).warn("after an await");
        // A timer armed during the request, firing after its answer.
        later = new Promise((resolve) => setTimeout(() => resolve(log.info("after the answer")), 5));
      },
      undefined,
    );
    scope.open = false;
    await later;
    log.info("outside");
    expect(records().map((r) => [r.msg, r.request_id])).toEqual([
      ["at once", "req_a"],
      ["after an await", "req_a"],
      ["after the answer", undefined],
      ["outside", undefined],
    ]);
  });

  test("concurrent scopes keep their own ids; a line's own request_id field wins", async () => {
    const { log, records } = capture();
    // req_1 starts first and logs after req_2 has: it resumes from a promise req_2's scope resolved.
    const second = Promise.withResolvers<void>();
    const run = (id: string, after: Promise<void>) =>
      runInRequestScope(
        { id, open: true },
        async () => {
          await after;
          log.info(id);
        },
        undefined,
      );
    await Promise.all([run("req_1", second.promise), run("req_2", Promise.resolve()).then(second.resolve)]);
    runInRequestScope({ id: "req_3", open: true }, () => log.info("explicit", { request_id: "req_given" }), undefined);
    expect(records().map((r) => [r.msg, r.request_id])).toEqual([
      ["req_2", "req_2"],
      ["req_1", "req_1"],
      ["explicit", "req_given"],
    ]);
  });
});

describe("access logger", () => {
  test("same output, level and base; no request id from the scope (it passes its own)", () => {
    const { log, records } = capture("info", { service: "s" });
    const access = log.access();
    expect(log.access()).toBe(access);
    runInRequestScope(
      { id: "req_x", open: true },
      () => {
        access.info("request", { status: 200 });
        access.debug("request", { status: 200 });
      },
      undefined,
    );
    expect(records()).toEqual([{ level: "info", time: expect.any(String), service: "s", status: 200, msg: "request" }]);
    expect(capture("warn").log.access().enabled("info")).toBe(false);
  });
});

describe("buffered output", () => {
  const lineCount = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).length;

  test("lines wait in the buffer, go out in one write once 8 KiB wait, and on flush() at once", () => {
    const dir = mkdtempSync(join(tmpdir(), "ct-log-"));
    try {
      const file = join(dir, "out.log");
      const log = createLogger("info", { service: "s" }, undefined, { buffered: true, file });
      log.info("first");
      expect(lineCount(file)).toBe(0);
      // ~100-character lines: the 8 KiB mark is passed within 100 lines, synchronously.
      for (let i = 0; i < 100; i++) log.info("request", { n: i });
      const written = lineCount(file);
      expect(written).toBeGreaterThan(50);
      expect(written).toBeLessThan(101);
      log.access().info("request", { status: 200 });
      log.flush();
      const lines = readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(102);
      expect(lines[0].msg).toBe("first");
      expect(lines.slice(1, 101).map((l) => l.n)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect(lines[101]).toMatchObject({ msg: "request", status: 200 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a line alone is written by the periodic flush, without an exit or a flush()", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ct-log-"));
    try {
      const file = join(dir, "out.log");
      createLogger("info", {}, undefined, { buffered: true, file }).warn("quiet service");
      expect(lineCount(file)).toBe(0);
      expect(await eventually(() => lineCount(file) === 1)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
