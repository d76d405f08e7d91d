/** Figures read from the database at scrape time, so every replica reports the same (use `max`). */
import { Gauge } from "prom-client";
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../lib/log.ts";
import { serviceRegistry } from "./registry.ts";

/** The re-check backlog gauge, registered by following.ts when loaded; the scrape finds it by name. */
const DUE_BACKLOG_METRIC = "courier_tracking_recheck_due_backlog";

/** Counting stops here: a backlog this large is an alert either way, and the count stays cheap. */
const COUNT_CAP = 100_000;

const recheckLag = new Gauge({
  name: "courier_tracking_recheck_lag_seconds",
  help: "Now minus the oldest due re-check (0 when none is due); shared across replicas.",
  registers: [serviceRegistry],
});
const outboxDue = new Gauge({
  name: "courier_tracking_outbox_due",
  help: `Webhook deliveries due now, waiting or in flight (counted up to ${COUNT_CAP}); shared across replicas.`,
  registers: [serviceRegistry],
});
const outboxAge = new Gauge({
  name: "courier_tracking_outbox_oldest_due_age_seconds",
  help: "Now minus the due time of the oldest due webhook delivery (0 when none is due); shared across replicas.",
  registers: [serviceRegistry],
});

const databaseUp = new Gauge({
  name: "courier_tracking_database_up",
  help: "1 when this process's last scrape read the database, 0 when that read failed (unreachable, refused or timed out).",
  registers: [serviceRegistry],
});

/**
 * Sets the database-backed gauges; each predicate matches a queue's due-time index, so a scrape costs the backlog.
 * @throws the driver's error when the database does not answer
 */
async function refreshDatabaseGauges(db: Db, nowMs: number): Promise<void> {
  const now = new Date(nowMs).toISOString();
  // Both schedules (docs/rechecks.md, "Layout level 2"): own due times, and each member of a due chunk.
  const [r] = await db.$client`
    with due as (
      select due_at from recheck_queue where due_at <= ${now}
      union all
      select due_at from recheck_schedule where due_at is not null and due_at <= ${now}
      union all
      select c.due_at from recheck_chunks c join recheck_schedule r on r.chunk_id = c.id and r.due_at is null
      where c.due_at <= ${now}
    )
    select
      (select count(*)::int from (select 1 from due limit ${COUNT_CAP}) s) as shipments_due,
      (select coalesce(extract(epoch from (${now}::timestamptz - min(due_at))), 0)::float8 from due) as recheck_lag,
      (select count(*)::int from (select 1 from delivery_queue where due_at <= ${now} limit ${COUNT_CAP}) d) as outbox_due,
      (select coalesce(extract(epoch from (${now}::timestamptz - min(due_at))), 0)::float8 from delivery_queue where due_at <= ${now}) as outbox_age`;
  (serviceRegistry.getSingleMetric(DUE_BACKLOG_METRIC) as Gauge | undefined)?.set(Number(r?.shipments_due ?? 0));
  recheckLag.set(Number(r?.recheck_lag ?? 0));
  outboxDue.set(Number(r?.outbox_due ?? 0));
  outboxAge.set(Number(r?.outbox_age ?? 0));
}

/** The Prometheus text of this process; in a database outage gauges keep their last value and `database_up` is 0. */
export async function renderMetrics(deps: { db: Db; clock: { now(): number }; log: Logger }): Promise<Response> {
  await refreshDatabaseGauges(deps.db, deps.clock.now()).then(
    () => databaseUp.set(1),
    (e) => {
      databaseUp.set(0);
      deps.log.warn("metrics: database gauges not refreshed", { error: e as Error });
    },
  );
  return new Response(await serviceRegistry.metrics(), { headers: { "content-type": serviceRegistry.contentType } });
}
