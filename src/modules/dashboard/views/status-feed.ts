/** The Atom feed of courier incidents (RFC 4287; docs/courier-health.md, "Status page"): one entry per transition. */
import type { IncidentView } from "../../courier-health/read.ts";
import { escapeHtml } from "../html.ts";

const percent = (share: number | null) => (share === null ? "no calls" : `${Math.round(share * 1000) / 10}%`);
const WHAT = { "courier.degraded": "degraded", "courier.down": "down", "courier.recovered": "recovered" } as const;

/** The feed at `baseUrl` (the public origin, no trailing slash); entries newest first, ids stable per transition. */
export function incidentFeed(
  incidents: IncidentView[],
  names: Map<string, string>,
  baseUrl: string,
  nowMs: number,
): string {
  const entries = incidents
    .flatMap((i) => i.transitions.map((t) => ({ i, t })))
    .sort((a, b) => (a.t.at < b.t.at ? 1 : a.t.at > b.t.at ? -1 : 0));
  const updated = entries[0]?.t.at ?? `${new Date(nowMs).toISOString().slice(0, 19)}Z`;
  const e = escapeHtml;
  const body = entries.map(({ i, t }) => {
    const name = names.get(i.courier) ?? i.courier;
    const f = t.figures;
    const summary = `${name} ${WHAT[t.event]} at ${t.at}: ${percent(f.success_share)} of ${f.calls} calls answered, p95 ${f.p95_ms ?? "—"} ms (incident ${i.id}, started ${i.started_at}${i.ended_at ? `, ended ${i.ended_at}` : ""}).`;
    return `<entry>
<id>urn:courier-tracking:${e(t.event_id)}</id>
<title>${e(`${name}: ${WHAT[t.event]}`)}</title>
<updated>${e(t.at)}</updated>
<link rel="alternate" type="text/html" href="${e(`${baseUrl}/status`)}"/>
<category term="${e(t.event)}"/>
<summary>${e(summary)}</summary>
</entry>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>urn:courier-tracking:status</id>
<title>Courier API incidents</title>
<updated>${e(updated)}</updated>
<author><name>Courier Tracking</name></author>
<link rel="self" type="application/atom+xml" href="${e(`${baseUrl}/status/feed.atom`)}"/>
<link rel="alternate" type="text/html" href="${e(`${baseUrl}/status`)}"/>
${body.join("\n")}
</feed>
`;
}
