/**
 * Alerts, dashboard and metric docs against a real scrape (docs/operations.md): the service answers a lookup,
 * then `/metrics` is fetched from the internal port. Every PromQL selector and grouping label of the
 * PrometheusRule and the Grafana dashboard names a series and labels that scrape has (or that Prometheus
 * adds as target labels); every family is in the table of docs/operations.md and every row of the table is
 * a family; every alert has a runbook section. With promtool installed (Debian `prometheus`; .ci/run installs
 * it), the rules pass `promtool check rules` and `promtool test rules` fires each alert on series shaped like
 * the scrape's and stays quiet below its threshold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import type { Gauge } from "prom-client";
import { startAdminServer, type AdminServer } from "../../src/modules/health/admin-server.ts";
import { renderMetrics } from "../../src/modules/metrics/scrape.ts";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { quotaLeasesFor } from "../helpers/services.ts";
import { connect } from "../../src/db/client.ts";
import { createLifecycle } from "../../src/modules/health/state.ts";
import { silentLogger } from "../../src/lib/log.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";

const ROOT = join(import.meta.dir, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");
const RULE = Bun.YAML.parse(read("deploy/kubernetes/monitoring/prometheusrule.yaml")) as any;
const RULES = RULE.spec.groups.flatMap((g: any) => g.rules) as { record?: string; alert?: string; expr: string }[];
const ALERTS = RULES.filter((r) => r.alert) as {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}[];
/** Series the recording rules write (the SLOs'), each with the labels it keeps. */
const RECORDED = new Map(
  RULES.filter((r) => r.record).map((r) => [
    r.record!,
    new Set((/sum by \(([\w, ]+)\)/.exec(r.expr)?.[1] ?? "").split(/, */)),
  ]),
);
const DASHBOARD = JSON.parse(read("deploy/grafana/courier-tracking.json")) as any;
const OPERATIONS = read("docs/operations.md");
const HAS_PROMTOOL = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0;

/** Labels Prometheus adds to every scraped series (target labels, and `component` from the ServiceMonitor's relabeling). */
const TARGET_LABELS = new Set(["job", "instance", "namespace", "pod", "service", "endpoint", "container", "component"]);

interface Family {
  type: string;
  labels: Set<string>;
}

let ctx: TestContext;
let admin: AdminServer;
let exposition = "";
const families = new Map<string, Family>();

beforeAll(async () => {
  ctx = await testContext();
  admin = startAdminServer(
    { db: ctx.deps.db, clock: ctx.deps.clock, log: silentLogger },
    { host: "127.0.0.1", port: 0, lifecycle: createLifecycle() },
  );
  // A lookup through the real app: request, courier call and event series get samples.
  const acc = await ctx.account("growth");
  const [track] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key: acc.key });
  expect(track.status).toBe(200);
  const res = await fetch(`http://127.0.0.1:${admin.port}/metrics`);
  expect(res.status).toBe(200);
  exposition = await res.text();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    // Labels declared by the family (samples of a labelled family appear only after its first observation).
    const declared = ((serviceRegistry.getSingleMetric(m[1]!) as unknown as { labelNames?: string[] })?.labelNames ??
      []) as string[];
    families.set(m[1]!, { type: m[2]!, labels: new Set(declared) });
  }
  for (const m of exposition.matchAll(/^([a-zA-Z_:][\w:]*)\{([^}]*)\}/gm)) {
    const family = familyOf(m[1]!);
    for (const l of m[2]!.matchAll(/(\w+)="/g)) if (l[1] !== "le") families.get(family!)?.labels.add(l[1]!);
  }
});
afterAll(async () => {
  await admin?.stop();
  await ctx?.close();
});

/** The family a series name belongs to (`x_bucket` → `x` for a histogram), or undefined. */
function familyOf(series: string): string | undefined {
  if (families.has(series)) return series;
  const m = /^(.*)_(bucket|sum|count)$/.exec(series);
  return m && ["histogram", "summary"].includes(families.get(m[1]!)?.type ?? "") ? m[1] : undefined;
}

/** Problems with one PromQL expression against the scrape: unknown series, unknown labels, parse errors. */
function checkPromQL(expr: string): { problems: string[]; series: string[] } {
  // Grafana's variables, as Grafana substitutes them before sending.
  const q = expr
    .replaceAll("$__rate_interval", "5m")
    .replaceAll("$__interval", "1m")
    .replace(/\$(\w+)/g, "$1");
  const tree = parser.parse(q);
  const problems: string[] = [];
  const series: string[] = [];
  const used = new Set<string>();
  const grouping: string[] = [];
  tree.iterate({
    enter(n) {
      if (n.type.isError) problems.push(`parse error at ${n.from}: ${q.slice(n.from, n.from + 20)}`);
      if (n.name === "VectorSelector") {
        const id = n.node.getChild("Identifier");
        const name = id ? q.slice(id.from, id.to) : "";
        series.push(name);
        if (RECORDED.has(name)) {
          const matchers = n.node.getChild("LabelMatchers");
          for (const l of matchers?.getChildren("UnquotedLabelMatcher") ?? []) {
            const label = q.slice(l.getChild("LabelName")!.from, l.getChild("LabelName")!.to);
            if (!RECORDED.get(name)!.has(label)) problems.push(`${name} has no label ${label}`);
          }
          return;
        }
        const family = familyOf(name);
        if (!family) problems.push(`no series ${name} in the scrape`);
        else used.add(family);
        const matchers = n.node.getChild("LabelMatchers");
        for (const l of matchers?.getChildren("UnquotedLabelMatcher") ?? []) {
          const label = q.slice(l.getChild("LabelName")!.from, l.getChild("LabelName")!.to);
          const ok =
            TARGET_LABELS.has(label) ||
            (label === "le" && name.endsWith("_bucket")) ||
            (family && families.get(family)!.labels.has(label));
          if (!ok) problems.push(`${name} has no label ${label}`);
        }
      }
      if (n.name === "GroupingLabels")
        for (const l of n.node.getChildren("LabelName")) grouping.push(q.slice(l.from, l.to));
    },
  });
  for (const label of grouping) {
    const ok =
      TARGET_LABELS.has(label) ||
      label === "le" ||
      [...used].some((f) => families.get(f)!.labels.has(label)) ||
      series.some((n) => RECORDED.get(n)?.has(label));
    if (!ok) problems.push(`no series of the expression has the label ${label} it groups by`);
  }
  if (series.length === 0) problems.push("no series selected");
  return { problems, series };
}

describe("the scrape", () => {
  test("carries the service's families and the default process ones", () => {
    for (const f of [
      "courier_tracking_http_request_duration_seconds",
      "courier_tracking_database_up",
      "courier_tracking_quota_lease_failures_total",
      "process_cpu_seconds_total",
    ])
      expect([f, families.has(f)]).toEqual([f, true]);
    expect(exposition).toMatch(/^courier_tracking_database_up 1$/m);
    expect(exposition).toMatch(/^courier_tracking_quota_lease_failures_total\{operation="return"\} \d+$/m);
  });

  test("the expression check finds unknown series and labels (it can fail)", () => {
    expect(checkPromQL("sum(rate(courier_tracking_nope_total[5m]))").problems).toEqual([
      "no series courier_tracking_nope_total in the scrape",
    ]);
    expect(checkPromQL('rate(courier_tracking_rechecks_total{account="x"}[5m])').problems).toEqual([
      "courier_tracking_rechecks_total has no label account",
    ]);
    expect(checkPromQL("sum by (tenant) (rate(courier_tracking_rechecks_total[5m]))").problems).toEqual([
      "no series of the expression has the label tenant it groups by",
    ]);
    expect(checkPromQL("sum(rate(courier_tracking_rechecks_total[5m])").problems.length).toBeGreaterThan(0);
    expect(checkPromQL("courier_tracking_outbox_due_bucket").problems).toEqual([
      "no series courier_tracking_outbox_due_bucket in the scrape",
    ]);
  });
});

describe("PrometheusRule", () => {
  test("covers outbox age, re-check lag, delivery failures, 5xx, courier errors, the database and quota statements", () => {
    const used = new Set(ALERTS.flatMap((a) => checkPromQL(a.expr).series));
    for (const f of [
      "courier_tracking_outbox_oldest_due_age_seconds",
      "courier_tracking_recheck_lag_seconds",
      "courier_tracking_webhook_delivery_attempts_total",
      "courier_tracking_http_request_duration_seconds_count",
      "courier_tracking_courier_call_duration_seconds_count",
      "courier_tracking_database_up",
      "courier_tracking_quota_lease_failures_total",
    ])
      expect([f, used.has(f)]).toEqual([f, true]);
  });

  for (const a of ALERTS)
    test(`${a.alert}: its expression uses series and labels of the scrape; severity; a runbook section`, () => {
      expect(checkPromQL(a.expr).problems).toEqual([]);
      expect(["info", "warning", "critical"]).toContain(String(a.labels.severity));
      const url = a.annotations.runbook_url!;
      expect(url).toMatch(/\/docs\/operations\.md#[a-z0-9-]+$/);
      const anchor = url.split("#")[1]!;
      expect(OPERATIONS).toContain(`### ${a.alert.replace(/Critical$/, "")}\n`);
      expect(anchor).toBe(a.alert.replace(/Critical$/, "").toLowerCase());
      for (const l of a.annotations.summary!.matchAll(/\$labels\.(\w+)/g)) {
        const groups = checkPromQL(a.expr);
        expect([
          l[1],
          TARGET_LABELS.has(l[1]!) || groups.series.some((s) => families.get(familyOf(s)!)?.labels.has(l[1]!)),
        ]).toEqual([l[1], true]);
      }
    });
});

describe("recording rules (the SLOs, docs/operations/slo.md)", () => {
  test("each SLI over the burn-rate windows, from series and labels of the scrape", () => {
    const records = RULES.filter((r) => r.record);
    expect(records.map((r) => r.record)).toEqual(
      ["track_errors", "delivery_late"].flatMap((sli) =>
        ["5m", "30m", "1h", "6h"].map((w) => `courier_tracking:slo_${sli}:ratio_rate${w}`),
      ),
    );
    for (const r of records) expect([r.record, checkPromQL(r.expr).problems]).toEqual([r.record, []]);
    for (const r of records) expect(r.expr).toContain(`[${r.record!.split("ratio_rate")[1]}]`);
  });

  test("the burn-rate alerts pair the workbook's windows: 1 h with 5 min at 14.4×, 6 h with 30 min at 6×", () => {
    for (const [slo, budget] of [
      ["Track", "0.001"],
      ["Delivery", "0.01"],
    ]) {
      const fast = ALERTS.find((a) => a.alert === `CourierTracking${slo}ErrorBudgetBurnCritical`)!;
      const slow = ALERTS.find((a) => a.alert === `CourierTracking${slo}ErrorBudgetBurn`)!;
      expect(fast.expr).toMatch(
        new RegExp(`ratio_rate1h > \\(14\\.4 \\* ${budget}\\)[\\s\\S]*ratio_rate5m > \\(14\\.4 \\* ${budget}\\)`),
      );
      expect(slow.expr).toMatch(
        new RegExp(`ratio_rate6h > \\(6 \\* ${budget}\\)[\\s\\S]*ratio_rate30m > \\(6 \\* ${budget}\\)`),
      );
      expect([fast.labels.severity, slow.labels.severity]).toEqual(["critical", "warning"]);
    }
  });
});

describe("Grafana dashboard", () => {
  const targets = DASHBOARD.panels.flatMap((p: any) =>
    (p.targets ?? []).map((t: any) => ({ panel: p.title, expr: t.expr as string })),
  );
  const variableQueries = DASHBOARD.templating.list
    .filter((v: any) => v.type === "query")
    .map((v: any) => v.definition as string);

  test("has requests, latency, couriers, re-checks, outbox, deliveries and process panels", () => {
    const rows = DASHBOARD.panels.filter((p: any) => p.type === "row").map((p: any) => p.title);
    expect(rows).toEqual(["SLOs", "Requests", "Couriers", "Re-checks", "Outbox and deliveries", "Process"]);
    expect(
      targets.some((t: any) => t.expr.includes("histogram_quantile") && t.expr.includes("http_request_duration")),
    ).toBe(true);
    expect(new Set(targets.flatMap((t: any) => checkPromQL(t.expr).series.map(familyOf))).size).toBeGreaterThanOrEqual(
      16,
    );
  });

  test("every query uses series and labels of the scrape", () => {
    expect(targets.length).toBeGreaterThan(20);
    for (const t of targets) expect([t.panel, t.expr, checkPromQL(t.expr).problems]).toEqual([t.panel, t.expr, []]);
    for (const v of variableQueries) {
      const [, series, label] = /^label_values\((\w+), (\w+)\)$/.exec(v)!;
      expect(familyOf(series!)).toBeDefined();
      expect(TARGET_LABELS.has(label!)).toBe(true);
    }
  });
});

describe("docs/operations.md, Metrics", () => {
  const rows = [...OPERATIONS.matchAll(/^\| `([a-z0-9_:]+)` \| (\w+) \| ([^|]*) \|/gm)].map((m) => ({
    name: m[1]!,
    type: m[2]!,
    labels: m[3]!.trim(),
  }));

  test("every family of the scrape has a row with its type and labels, and every row is a family", () => {
    expect(rows.length).toBeGreaterThan(10);
    const documented = new Map(rows.map((r) => [r.name, r]));
    for (const [name, f] of families) {
      const row = documented.get(name);
      expect([name, row?.type]).toEqual([name, f.type]);
      const labels = row!.labels === "—" ? [] : [...row!.labels.matchAll(/`(\w+)`/g)].map((m) => m[1]);
      expect([name, labels.sort()]).toEqual([name, [...f.labels].sort()]);
    }
    for (const r of rows) expect([r.name, families.has(r.name)]).toEqual([r.name, true]);
  });
});

describe("database and quota failure metrics", () => {
  const value = (text: string, series: string) =>
    Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1]);

  test("database_up turns 0 while the database is cut and back to 1; failed quota grants and returns are counted", async () => {
    const acc = await ctx.account("growth");
    const relay = startPgRelay(ctx.tdb.url);
    const replica = connect(relay.url, { max: 2 });
    const leases = quotaLeasesFor(replica.db);
    const deps = { db: replica.db, clock: ctx.deps.clock, log: silentLogger };
    try {
      const before = await (await renderMetrics(deps)).text();
      expect(value(before, "courier_tracking_database_up")).toBe(1);
      const reservation = await leases.reserve(acc.id, 500_000, ctx.deps.clock.now());
      relay.stop();
      await expect(leases.release(acc.id, reservation)).rejects.toThrow();
      const other = await ctx.account("growth");
      await expect(Promise.resolve(leases.reserve(other.id, 500_000, ctx.deps.clock.now()))).rejects.toThrow();
      const during = await (await renderMetrics(deps)).text();
      expect(value(during, "courier_tracking_database_up")).toBe(0);
      expect(value(during, 'courier_tracking_quota_lease_failures_total{operation="grant"}')).toBe(
        value(before, 'courier_tracking_quota_lease_failures_total{operation="grant"}') + 1,
      );
      expect(value(during, 'courier_tracking_quota_lease_failures_total{operation="return"}')).toBeGreaterThan(
        value(before, 'courier_tracking_quota_lease_failures_total{operation="return"}'),
      );
      relay.start();
      await leases.returnAll();
      expect(value(await (await renderMetrics(deps)).text(), "courier_tracking_database_up")).toBe(1);
    } finally {
      relay.stop();
      await replica.sql.end({ timeout: 1 });
      (serviceRegistry.getSingleMetric("courier_tracking_database_up") as Gauge).set(1);
    }
  });
});

/** For each alert: series shaped like the scrape's (checked below), when it must fire, and a case where it must not. */
/** `interval`: the input series' step and promtool's evaluation interval (default 1m). */
const CASES: {
  alert: string;
  series: Record<string, string>;
  at: string;
  fires: Record<string, string>[];
  interval?: string;
}[] = [
  {
    alert: "CourierTrackingOutboxBacklog",
    series: { 'courier_tracking_outbox_oldest_due_age_seconds{namespace="prod",pod="api-1"}': "400+60x40" },
    at: "15m",
    fires: [{}],
  },
  {
    alert: "CourierTrackingOutboxBacklogCritical",
    series: { 'courier_tracking_outbox_oldest_due_age_seconds{namespace="prod",pod="api-1"}': "400+60x40" },
    at: "40m",
    fires: [{}],
  },
  {
    alert: "CourierTrackingOutboxBacklogCritical",
    series: { 'courier_tracking_outbox_oldest_due_age_seconds{namespace="prod",pod="api-1"}': "400+60x40" },
    at: "15m",
    fires: [],
  },
  {
    alert: "CourierTrackingOutboxBacklog",
    series: { 'courier_tracking_outbox_oldest_due_age_seconds{namespace="prod",pod="api-1"}': "100x40" },
    at: "20m",
    fires: [],
  },
  {
    alert: "CourierTrackingRecheckLag",
    series: { 'courier_tracking_recheck_lag_seconds{namespace="prod",pod="worker-1"}': "4000x30" },
    at: "20m",
    fires: [{}],
  },
  {
    alert: "CourierTrackingRecheckLag",
    series: { 'courier_tracking_recheck_lag_seconds{namespace="prod",pod="worker-1"}': "100x30" },
    at: "20m",
    fires: [],
  },
  {
    alert: "CourierTrackingWebhookFailureRatio",
    series: {
      'courier_tracking_webhook_delivery_attempts_total{namespace="prod",pod="worker-1",outcome="delivered",mode="live"}':
        "0+10x40",
      'courier_tracking_webhook_delivery_attempts_total{namespace="prod",pod="worker-1",outcome="retried",mode="live"}':
        "0+10x40",
      'courier_tracking_webhook_delivery_attempts_total{namespace="prod",pod="worker-1",outcome="delivered",mode="sandbox"}':
        "0+10x40",
    },
    at: "35m",
    fires: [{ mode: "live" }],
  },
  {
    alert: "CourierTrackingWebhookFailureRatio",
    series: {
      'courier_tracking_webhook_delivery_attempts_total{namespace="prod",pod="worker-1",outcome="delivered",mode="live"}':
        "0+10x40",
      'courier_tracking_webhook_delivery_attempts_total{namespace="prod",pod="worker-1",outcome="retried",mode="live"}':
        "0+1x40",
    },
    at: "35m",
    fires: [],
  },
  {
    alert: "CourierTrackingWebhooksDeactivated",
    series: { 'courier_tracking_webhooks_deactivated_total{namespace="prod",pod="worker-1"}': "0+1x60" },
    at: "30m",
    fires: [{}],
  },
  {
    alert: "CourierTrackingWebhooksDeactivated",
    series: { 'courier_tracking_webhooks_deactivated_total{namespace="prod",pod="worker-1"}': "0x60" },
    at: "30m",
    fires: [],
  },
  {
    alert: "CourierTrackingHttp5xxRatio",
    series: {
      'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="200"}':
        "0+100x30",
      'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="503"}':
        "0+10x30",
    },
    at: "20m",
    fires: [{}],
  },
  {
    alert: "CourierTrackingHttp5xxRatio",
    series: {
      'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="200"}':
        "0+100x30",
      'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="503"}':
        "0+1x30",
    },
    at: "20m",
    fires: [],
  },
  {
    alert: "CourierTrackingCourierErrorRatio",
    series: {
      'courier_tracking_courier_call_duration_seconds_count{namespace="prod",pod="worker-1",courier="dhl",outcome="ok"}':
        "0+10x40",
      'courier_tracking_courier_call_duration_seconds_count{namespace="prod",pod="worker-1",courier="dhl",outcome="timeout"}':
        "0+10x40",
      'courier_tracking_courier_call_duration_seconds_count{namespace="prod",pod="worker-1",courier="bluedart",outcome="ok"}':
        "0+10x40",
    },
    at: "35m",
    fires: [{ courier: "dhl" }],
  },
  {
    alert: "CourierTrackingDatabaseUnreachable",
    series: { 'courier_tracking_database_up{namespace="prod",pod="api-1"}': "1 1 1 0x20" },
    at: "10m",
    fires: [{ namespace: "prod", pod: "api-1" }],
  },
  {
    alert: "CourierTrackingDatabaseUnreachable",
    series: { 'courier_tracking_database_up{namespace="prod",pod="api-1"}': "1 1 1 0 1x20" },
    at: "10m",
    fires: [],
  },
  {
    alert: "CourierTrackingQuotaLeaseFailures",
    series: {
      'courier_tracking_quota_lease_failures_total{namespace="prod",pod="api-1",operation="grant"}': "0+1x20",
      'courier_tracking_quota_lease_failures_total{namespace="prod",pod="api-1",operation="return"}': "0x20",
    },
    at: "15m",
    fires: [{ operation: "grant" }],
  },
  {
    alert: "CourierTrackingCourierBudgetShort",
    series: {
      'courier_tracking_courier_budget_coverage_ratio{namespace="prod",pod="worker-1",backend="delhivery"}': "0.5x90",
      'courier_tracking_courier_budget_coverage_ratio{namespace="prod",pod="worker-1",backend="dhl"}': "3x90",
    },
    at: "80m",
    fires: [{ backend: "delhivery" }],
  },
  ...courierHealthCases(),
  // The SLOs: 1 000 lookups a minute; 2 % of them 500s burns the 0.1 % budget 20× (both alerts), 1 % 10× (the
  // 6 h one only), 0.05 % not at all. Lookups' own time is under 1 s unless a case says otherwise.
  ...trackCases(),
  // 100 live deliveries a minute; 20 % first attempted after 60 s burns the 1 % budget 20×, 8 % 8×, 0.5 % never.
  ...deliveryCases(),
];

type AlertCase = (typeof CASES)[number];

/** Courier health alerts (docs/courier-health.md): answered share under 95 % / 50 %, p95 over 3× its 7-day p95. */
function courierHealthCases(): AlertCase[] {
  const calls = (courier: string, outcome: string) =>
    `courier_tracking_courier_call_duration_seconds_count{namespace="prod",pod="worker-1",courier="${courier}",outcome="${outcome}"}`;
  // A week and 40 minutes in 5-minute steps, 100 calls a step, all under 0.5 s; for the last 40 minutes half of
  // them take 5–10 s. Samples at 40 minutes (inside the baseline's week) and in the last 80 minutes only.
  const week = (7 * 24 * 60) / 5;
  const counter = (at: (step: number) => number) =>
    `0 _x7 ${at(8)} _x${week - 17} ${Array.from({ length: 17 }, (_, i) => at(week - 8 + i)).join(" ")}`;
  const steady = counter((k) => 100 * k);
  const halfSlow = counter((k) => (k <= week ? 100 * k : 100 * week + 50 * (k - week)));
  const bucket = (courier: string, le: string) =>
    `courier_tracking_courier_call_duration_seconds_bucket{namespace="prod",pod="worker-1",courier="${courier}",outcome="ok",le="${le}"}`;
  // dtdc slows down, bluedart stays as it was: one input, so promtool evaluates the week once.
  const slowCase: AlertCase = {
    alert: "CourierTrackingCourierSlow",
    series: Object.fromEntries(
      ["dtdc", "bluedart"].flatMap((c) => [
        ...["0.5", "5"].map((le) => [bucket(c, le), c === "dtdc" ? halfSlow : steady]),
        ...["10", "+Inf"].map((le) => [bucket(c, le), steady]),
        [calls(c, "ok"), steady],
      ]),
    ),
    at: `${(week + 7) * 5}m`,
    fires: [{ courier: "dtdc" }],
    interval: "5m",
  };
  return [
    {
      alert: "CourierTrackingCourierDegraded",
      series: {
        [calls("dhl", "ok")]: "0+18x40",
        [calls("dhl", "timeout")]: "0+2x40",
        [calls("dtdc", "ok")]: "0+20x40",
      },
      at: "35m",
      fires: [{ courier: "dhl" }],
    },
    {
      alert: "CourierTrackingCourierDegraded",
      series: {
        [calls("dhl", "ok")]: "0+96x40",
        [calls("dhl", "not_found")]: "0+3x40",
        [calls("dhl", "backend")]: "0+1x40",
      },
      at: "35m",
      fires: [],
    },
    {
      alert: "CourierTrackingCourierDown",
      series: {
        [calls("dhl", "ok")]: "0+8x40",
        [calls("dhl", "backend")]: "0+12x40",
        [calls("dtdc", "ok")]: "0+20x40",
      },
      at: "35m",
      fires: [{ courier: "dhl" }],
    },
    {
      alert: "CourierTrackingCourierDown",
      series: { [calls("dhl", "ok")]: "0+12x40", [calls("dhl", "backend")]: "0+8x40" },
      at: "35m",
      fires: [],
    },
    slowCase,
  ];
}

function trackCases() {
  const at = "75m";
  const series = (errorsPerMin: number, slowPerMin = 0) => ({
    'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="200"}': `0+${1000 - errorsPerMin}x100`,
    'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="500"}': `0+${errorsPerMin}x100`,
    // Courier failures passed on are not ours: 10 % of 502s burn nothing.
    'courier_tracking_http_request_duration_seconds_count{namespace="prod",pod="api-1",route="/v1/track",method="GET",status="502"}':
      "0+100x100",
    'courier_tracking_track_own_duration_seconds_bucket{namespace="prod",pod="api-1",result="ok",le="1"}': `0+${1000 - slowPerMin}x100`,
    'courier_tracking_track_own_duration_seconds_count{namespace="prod",pod="api-1",result="ok"}': "0+1000x100",
  });
  return [
    { alert: "CourierTrackingTrackErrorBudgetBurnCritical", series: series(20), at, fires: [{ namespace: "prod" }] },
    { alert: "CourierTrackingTrackErrorBudgetBurn", series: series(20), at, fires: [{ namespace: "prod" }] },
    { alert: "CourierTrackingTrackErrorBudgetBurnCritical", series: series(10), at, fires: [] },
    { alert: "CourierTrackingTrackErrorBudgetBurn", series: series(10), at, fires: [{ namespace: "prod" }] },
    // Slow lookups count as failures: 2 % over 1 s of our own time.
    { alert: "CourierTrackingTrackErrorBudgetBurnCritical", series: series(0, 20), at, fires: [{ namespace: "prod" }] },
    { alert: "CourierTrackingTrackErrorBudgetBurn", series: series(0.5, 0), at, fires: [] },
  ];
}

function deliveryCases() {
  const at = "75m";
  const series = (latePerMin: number) => ({
    'courier_tracking_webhook_first_attempt_delay_seconds_bucket{namespace="prod",pod="worker-1",mode="live",le="60"}': `0+${100 - latePerMin}x100`,
    'courier_tracking_webhook_first_attempt_delay_seconds_count{namespace="prod",pod="worker-1",mode="live"}':
      "0+100x100",
    // Test fires are not in the SLO, however late.
    'courier_tracking_webhook_first_attempt_delay_seconds_bucket{namespace="prod",pod="worker-1",mode="test",le="60"}':
      "0x100",
    'courier_tracking_webhook_first_attempt_delay_seconds_count{namespace="prod",pod="worker-1",mode="test"}':
      "0+50x100",
  });
  return [
    { alert: "CourierTrackingDeliveryErrorBudgetBurnCritical", series: series(20), at, fires: [{ namespace: "prod" }] },
    { alert: "CourierTrackingDeliveryErrorBudgetBurn", series: series(8), at, fires: [{ namespace: "prod" }] },
    { alert: "CourierTrackingDeliveryErrorBudgetBurnCritical", series: series(8), at, fires: [] },
    { alert: "CourierTrackingDeliveryErrorBudgetBurn", series: series(0.5), at, fires: [] },
  ];
}

describe("alerts fire on series like the scrape's (promtool test rules)", () => {
  test("every alert has a case that fires and the input series exist in the scrape", () => {
    for (const a of ALERTS)
      expect([a.alert, CASES.some((c) => c.alert === a.alert && c.fires.length > 0)]).toEqual([a.alert, true]);
    for (const c of CASES) for (const s of Object.keys(c.series)) expect([s, checkPromQL(s).problems]).toEqual([s, []]);
  });

  test.skipIf(!HAS_PROMTOOL)("promtool check rules, then promtool test rules", () => {
    const dir = mkdtempSync(join(tmpdir(), "rules-"));
    try {
      writeFileSync(join(dir, "rules.yaml"), JSON.stringify(RULE.spec));
      const check = spawnSync("promtool", ["check", "rules", join(dir, "rules.yaml")], { encoding: "utf8" });
      expect([check.status, check.stdout + check.stderr]).toEqual([
        0,
        expect.stringContaining(`SUCCESS: ${RULES.length} rules found`),
      ]);
      // Annotations are templates checked above; the unit test compares labels only.
      const bare = {
        groups: RULE.spec.groups.map((g: any) => ({ ...g, rules: g.rules.map(({ annotations: _, ...r }: any) => r) })),
      };
      const severity = Object.fromEntries(ALERTS.map((a) => [a.alert, a.labels.severity]));
      // One test file per interval with the rules its cases test (and the recording rules the SLO alerts read):
      // promtool evaluates each of them at every step.
      for (const interval of new Set(CASES.map((c) => c.interval ?? "1m"))) {
        const cases = CASES.filter((c) => (c.interval ?? "1m") === interval);
        const tested = new Set(cases.map((c) => c.alert));
        const readsRecords = bare.groups.some((g: any) =>
          g.rules.some((r: any) => tested.has(r.alert) && String(r.expr).includes("courier_tracking:")),
        );
        const rules = {
          groups: bare.groups.map((g: any) => ({
            ...g,
            rules: g.rules.filter((r: any) => (r.record && readsRecords) || tested.has(r.alert)),
          })),
        };
        writeFileSync(join(dir, `bare-${interval}.yaml`), JSON.stringify(rules));
        const tests = cases.map((c) => ({
          interval,
          input_series: Object.entries(c.series).map(([series, values]) => ({ series, values })),
          alert_rule_test: [
            {
              eval_time: c.at,
              alertname: c.alert,
              exp_alerts: c.fires.map((labels) => ({ exp_labels: { ...labels, severity: severity[c.alert] } })),
            },
          ],
        }));
        const file = join(dir, `test-${interval}.yaml`);
        writeFileSync(
          file,
          JSON.stringify({ rule_files: [`bare-${interval}.yaml`], evaluation_interval: interval, tests }),
        );
        const run = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
        expect([run.status, run.stdout + run.stderr]).toEqual([0, expect.stringContaining("SUCCESS")]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
