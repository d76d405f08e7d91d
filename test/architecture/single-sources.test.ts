/**
 * Every enum and spec number has one source (docs/architecture.md, "Single sources"): event names are written only in
 * src/domain/events.ts (schemas derive from `EVENT_TYPES` / `WEBHOOK_EVENT_TYPES`), and SQL gets the quota marks and
 * the deactivation threshold as parameters from their domain constants. The allow-list below names each file that
 * still spells an event, with why tsc already ties it to the list; a new file or a new name there fails, and so does
 * a stale entry.
 */
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { WEBHOOK_EVENT_TYPES } from "../../src/domain/events.ts";

const ROOT = join(import.meta.dir, "..", "..");
const HOME = "src/domain/events.ts";

/** Dotted names that look like events but are not (tracing attributes, a model registry name). */
const NOT_EVENTS = new Set(["courier.slug", "courier.outcome", "tracking.models"]);

/** A quoted (not backticked: prose) `tracking.*` or `courier.*` name: every listed event, and any new one not yet listed. */
const EVENT_LITERAL = /["']((?:tracking|courier)\.[a-z_]+)["']/g;

/** The names a file spells: `"every"` for an exhaustive `Record<EventType, …>` table (tsc demands each key). */
const ALLOWED: Readonly<Record<string, { names: readonly string[] | "every"; why: string }>> = {
  "src/domain/courier-health.ts": {
    names: ["courier.degraded", "courier.down", "courier.recovered"],
    why: "the courier events' own list (`COURIER_EVENT_TYPES`, spread into WEBHOOK_EVENT_TYPES) and the rule choosing one",
  },
  "src/modules/courier-health/event.ts": {
    names: ["courier.down", "courier.degraded"],
    why: "a sample's state from its event, typed `CourierEventType`",
  },
  "src/modules/following/normalise.ts": { names: ["tracking.updated"], why: "the rule choosing it, typed `EventType`" },
  "src/modules/following/history-events.ts": {
    names: ["tracking.eta_changed"],
    why: "the rule choosing it, typed `EventType`",
  },
  "src/modules/following/stalls.ts": { names: ["tracking.stalled"], why: "the rule choosing it, typed `EventType`" },
  "src/modules/webhooks/delivery/payload.ts": {
    names: "every",
    why: "`SAMPLE_STATE: Record<EventType, …>` and two checks on a parameter typed `EventType`",
  },
  "src/modules/webhooks/delivery/claim.ts": {
    names: ["tracking.eta_changed", "tracking.action_updated"],
    why: "SQL parameters checked by `satisfies EventType`",
  },
  "src/modules/following/action-events.ts": {
    names: ["tracking.action_updated"],
    why: "the event this writer stores, typed `EventType` (and a SQL parameter from it)",
  },
  "src/modules/dashboard/views/status-feed.ts": {
    names: "every",
    why: "a table keyed by the courier events, typed by their union",
  },
  "src/modules/dashboard/routes/webhook-forms.ts": {
    names: ["tracking.delivered"],
    why: "the new-webhook form's default selection, typed by the body schema",
  },
  "src/openapi/webhooks.ts": { names: "every", why: "`EVENT_WHEN: Record<WebhookEventType, string>`" },
  "src/openapi/examples.ts": {
    names: ["tracking.delivered", "tracking.exception", "courier.degraded"],
    why: "document examples, validated against the schemas by test/http/openapi-properties.test.ts",
  },
  "src/openapi/features.ts": {
    names: ["tracking.delivered"],
    why: "document examples, validated against the schemas by test/http/openapi-properties.test.ts",
  },
};

/** SQL spelling a spec number that has a domain constant: the quota marks (`QUOTA_MARKS`), the deactivation threshold. */
const SPEC_NUMBER_IN_SQL: readonly RegExp[] = [
  /values\s*\(\s*(?:80|100)\s*\)/i, // quota marks as a VALUES list
  /array\s*\[\s*80\s*,\s*100\s*\]/i,
  /'\{\s*80\s*,\s*100\s*\}'/,
  /failure_count[^`\n]*>=\s*\d/, // the deactivation threshold
];

const srcFiles = () => [...new Glob("src/**/*.ts").scanSync({ cwd: ROOT })].sort();
const eventNames = (text: string) => new Set([...text.matchAll(EVENT_LITERAL)].map((m) => m[1]!));

describe("single sources", () => {
  test("no event name is spelled in src/ outside src/domain/events.ts, but where the allow-list says why", () => {
    const found: Record<string, string[]> = {};
    for (const f of srcFiles()) {
      if (f === HOME) continue;
      const names = [...eventNames(readFileSync(join(ROOT, f), "utf8"))].filter((n) => !NOT_EVENTS.has(n));
      if (names.length) found[f] = names.sort();
    }
    const offending = Object.entries(found).flatMap(([f, names]) => {
      const allowed = ALLOWED[f];
      if (!allowed) return [`${f}: ${names.join(", ")}`];
      if (allowed.names === "every") return [];
      const extra = names.filter((n) => !allowed.names.includes(n));
      return extra.length ? [`${f}: ${extra.join(", ")}`] : [];
    });
    expect(offending).toEqual([]);
    expect(Object.keys(ALLOWED).filter((f) => !found[f])).toEqual([]); // stale entries
  });

  test("the pattern sees every listed event and a hand-typed union, not tracing attributes", () => {
    for (const e of WEBHOOK_EVENT_TYPES) expect([...eventNames(`x = "${e}"`)]).toEqual([e]);
    expect([...eventNames(`t.Union([t.Literal("tracking.delivered"), t.Literal('tracking.new_one')])`)]).toEqual([
      "tracking.delivered",
      "tracking.new_one",
    ]);
    expect([...eventNames("where c.event_type = 'tracking.eta_changed'")]).toEqual(["tracking.eta_changed"]);
    expect([...eventNames(`{ "courier.slug": slug }`)].filter((n) => !NOT_EVENTS.has(n))).toEqual([]);
  });

  test("no SQL in src/ spells the quota marks or the deactivation threshold", () => {
    const hits = srcFiles().flatMap((f) =>
      readFileSync(join(ROOT, f), "utf8")
        .split("\n")
        .map((line, i) => `${f}:${i + 1}: ${line.trim()}`)
        .filter((entry) => SPEC_NUMBER_IN_SQL.some((re) => re.test(entry.slice(entry.indexOf(": ") + 2)))),
    );
    expect(hits).toEqual([]);
  });

  test("the SQL patterns catch the old spellings", () => {
    for (const line of [
      "from g, (values (80), (100)) as m(pct)",
      "unnest(array[80, 100])",
      "unnest('{80,100}'::int[])",
      "status = case when w.failure_count + f.add >= 20 then 'deactivated'",
    ])
      expect(SPEC_NUMBER_IN_SQL.some((re) => re.test(line))).toBe(true);
    expect(SPEC_NUMBER_IN_SQL.some((re) => re.test("+ f.add >= ${DEACTIVATE_AFTER_FAILURES} then"))).toBe(false);
  });
});
