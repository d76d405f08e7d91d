/** The public status page (docs/courier-health.md, "Status page"): every courier's state, 24 h charts, incidents. */
import type { HealthState, WindowFigures } from "../../../domain/courier-health.ts";
import type { IncidentView } from "../../courier-health/read.ts";
import { fmtInt, fmtTime, html, type SafeHtml } from "../html.ts";
import { labelAt, MIN_BAR_PX, pct } from "./chart-kit.ts";

export interface StatusCourier {
  slug: string;
  name: string;
  state: HealthState;
  since: string | null;
  day: WindowFigures;
  /** 24 hourly slots, oldest first: the slot's start (ms) and figures. */
  hours: { startMs: number; figures: WindowFigures }[];
}

const STATE_LABEL: Record<HealthState, string> = {
  operational: "Operational",
  degraded: "Degraded",
  down: "Down",
  unknown: "Not enough calls",
};
const BADGE: Record<HealthState, string> = { operational: "ok", degraded: "warn-state", down: "bad", unknown: "test" };

const percent = (share: number | null) => (share === null ? "—" : `${Math.round(share * 1000) / 10}%`);
const msText = (ms: number | null) => (ms === null ? "—" : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`);
const hourLabel = (ms: number) => `${new Date(ms).toISOString().slice(11, 13)}:00`;

const H = 96;
const PAD_B = 20;
const PAD_T = 8;
const PLOT = H - PAD_B - PAD_T;

/** One bar per hour: `value(h)` of `max`; hours without calls have no bar. Labels every 6 hours. */
function spark(
  id: string,
  title: string,
  desc: string,
  hours: StatusCourier["hours"],
  value: (f: WindowFigures) => number | null,
  max: number,
  text: (f: WindowFigures) => string,
  cls: (f: WindowFigures) => string,
): SafeHtml {
  const n = hours.length;
  const slot = 100 / n;
  const bw = slot * 0.7;
  const base = H - PAD_B;
  const bars = hours.map((h, i) => {
    const v = value(h.figures);
    if (v === null || max <= 0) return "";
    const px = Math.max(MIN_BAR_PX, (Math.min(v, max) / max) * PLOT);
    return html`<rect class="${cls(h.figures)}" x="${pct(i * slot + (slot - bw) / 2)}" y="${(base - px).toFixed(1)}" width="${pct(bw)}" height="${px.toFixed(1)}"><title>${hourLabel(h.startMs)} UTC: ${text(h.figures)}</title></rect>`;
  });
  const labels = hours.flatMap((h, i) => {
    if ((n - 1 - i) % 6 !== 0) return [];
    const at = labelAt(i, n);
    return [
      html`<text class="axis" x="${at.x}" y="${H - 5}" text-anchor="${at.anchor}">${hourLabel(h.startMs)}</text>`,
    ];
  });
  return html`<figure class="chart"><svg class="spark" height="${H}" role="img" aria-labelledby="${id}-t" aria-describedby="${id}-d" focusable="false">
<title id="${id}-t">${title}</title><desc id="${id}-d">${desc}</desc>
<line class="axis-line" x1="0" y1="${base}" x2="100%" y2="${base}"></line>
${bars}${labels}</svg><figcaption>${title}</figcaption></figure>`;
}

function courierCard(c: StatusCourier): SafeHtml {
  const maxP95 = Math.max(1000, ...c.hours.map((h) => h.figures.p95_ms ?? 0));
  const succ = spark(
    `succ-${c.slug}`,
    `${c.name}: answered share per hour, last 24 hours (${percent(c.day.success_share)} overall)`,
    "One bar per UTC hour with calls, full height at 100 %; red below 95 %. Hours without calls have no bar.",
    c.hours,
    (f) => f.success_share,
    1,
    (f) => `${percent(f.success_share)} answered of ${fmtInt(f.calls)} calls`,
    (f) => ((f.success_share ?? 1) < 0.95 ? "bar-bad" : "bar-ok"),
  );
  const lat = spark(
    `p95-${c.slug}`,
    `${c.name}: p95 latency per hour, last 24 hours (${msText(c.day.p95_ms)} overall)`,
    `One bar per UTC hour with calls; the tallest is ${msText(maxP95)}.`,
    c.hours,
    (f) => f.p95_ms,
    maxP95,
    (f) => `p95 ${msText(f.p95_ms)}, p50 ${msText(f.p50_ms)}`,
    () => "bar-ok",
  );
  return html`<section class="card" aria-labelledby="c-${c.slug}" data-testid="courier-${c.slug}">
<h2 id="c-${c.slug}">${c.name} <span class="badge ${BADGE[c.state]}" data-testid="state">${STATE_LABEL[c.state]}</span></h2>
<p class="state">${c.since ? html`Since ${fmtTime(c.since)}` : "Not evaluated yet"} · last 24 h: ${percent(c.day.success_share)} of ${fmtInt(c.day.calls)} calls answered, p50 ${msText(c.day.p50_ms)}, p95 ${msText(c.day.p95_ms)}</p>
<div class="sparks">${succ}${lat}</div>
</section>`;
}

function incidentRow(i: IncidentView, names: Map<string, string>): SafeHtml {
  const first = i.transitions[0]?.figures;
  return html`<tr><th scope="row">${names.get(i.courier) ?? i.courier}</th><td data-label="State">${STATE_LABEL[i.state]}</td><td data-label="Start">${fmtTime(i.started_at)}</td><td data-label="End">${i.ended_at ? fmtTime(i.ended_at) : "ongoing"}</td><td data-label="Figures at start">${first ? `${percent(first.success_share)} answered, p95 ${msText(first.p95_ms)}, ${fmtInt(first.calls)} calls` : "—"}</td></tr>`;
}

/** The whole page; `updatedMs` is when its figures were read. No account data, no script. */
export function statusPage(couriers: StatusCourier[], incidents: IncidentView[], updatedMs: number): SafeHtml {
  const troubled = couriers.filter((c) => c.state === "degraded" || c.state === "down");
  const names = new Map(couriers.map((c) => [c.slug, c.name]));
  const headline =
    troubled.length === 0
      ? "No courier API is degraded or down right now."
      : `${troubled.map((c) => `${c.name} (${STATE_LABEL[c.state].toLowerCase()})`).join(", ")}: tracking answers may be late.`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Courier API status · Courier Tracking</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<link rel="alternate" type="application/atom+xml" title="Courier incidents" href="/status/feed.atom">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/status">Courier Tracking status</a></header>
<main id="main" tabindex="-1">
<h1>Courier API status</h1>
<p data-testid="headline">${headline}</p>
<p class="hint">Measured from this service's own calls to each courier (every lookup and re-check), evaluated every minute. Updated ${fmtTime(new Date(updatedMs))}. <a href="/status/feed.atom">Incident feed (Atom)</a></p>
${couriers.map(courierCard)}
<section class="card" aria-labelledby="incidents-h">
<h2 id="incidents-h">Incidents, last 30 days</h2>
${
  incidents.length === 0
    ? html`<p data-testid="no-incidents">No incidents.</p>`
    : html`<div class="scroll"><table data-testid="incidents"><thead><tr><th scope="col">Courier</th><th scope="col">Worst state</th><th scope="col">Start</th><th scope="col">End</th><th scope="col">Figures at start</th></tr></thead>
<tbody>${incidents.map((i) => incidentRow(i, names))}</tbody></table></div>`
}
</section>
</main>
<footer class="foot"><a href="/docs">API reference</a> (GET /v1/couriers/{slug}/health) · times are UTC</footer>
</body>
</html>`;
}
