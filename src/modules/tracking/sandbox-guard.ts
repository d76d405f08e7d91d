/** Who may advance a sandbox shipment, and how often (docs/spec-map.md#sandbox, "Advancing on demand"). */
import { sql } from "drizzle-orm";
import type { EventSink } from "../../core-deps.ts";
import type { Db } from "../../db/client.ts";
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../lib/errors.ts";
import { hitFixedWindow } from "../accounts/rate-limit.ts";
import type { Courier } from "../couriers/catalogue.ts";

/** Advances per account in one fixed UTC minute, every replica together (counted in `rate_windows`). */
export const SANDBOX_ADVANCES_PER_MINUTE = 30;
const MINUTE_MS = 60_000;

/** Counts one advance of `accountId`. @throws AppError RATE_LIMITED (429, `Retry-After` in s) over the limit. */
export async function limitAdvances(deps: Pick<AppDeps, "db" | "clock">, accountId: string): Promise<void> {
  const key = `sandbox-advance:${accountId}`;
  const hit = await hitFixedWindow(deps.db, key, SANDBOX_ADVANCES_PER_MINUTE, MINUTE_MS, deps.clock.now());
  if (!hit.allowed)
    throw new AppError(
      "RATE_LIMITED",
      `At most ${SANDBOX_ADVANCES_PER_MINUTE} sandbox advances a minute per account; retry after ${hit.resetSeconds} s.`,
      {},
      { "retry-after": String(hit.resetSeconds) },
    );
}

const shared = (courier: Courier, awb: string) =>
  new AppError(
    "SANDBOX_SHIPMENT_SHARED",
    `Another account follows ${courier.slug} ${awb} too, so advancing it would send that account's webhooks; advance a number only your account follows.`,
  );

/**
 * Checks that `accountId` follows the shipment and no other account does (an advance then changes no one else's
 * data). @throws AppError SHIPMENT_NOT_FOLLOWED (404), SANDBOX_SHIPMENT_SHARED (409)
 */
export async function requireSoleFollower(db: Db, accountId: string, courier: Courier, awb: string): Promise<void> {
  const [row] = await db.$client<{ mine: boolean | null; others: boolean | null }[]>`
    select bool_or(f.account_id = ${accountId}) as mine, bool_or(f.account_id <> ${accountId}) as others
    from follows f join shipments s on s.id = f.shipment_id
    where s.courier = ${courier.slug} and s.tracking_number = ${awb}`;
  if (!row?.mine)
    throw new AppError(
      "SHIPMENT_NOT_FOLLOWED",
      courier.follow === "lookup"
        ? `${courier.name} shipments are looked up, never followed, so they cannot be advanced; they move one step every SANDBOX_STEP_SECONDS.`
        : `This account does not follow ${courier.slug} ${awb}; follow it with POST /v1/shipments or GET /v1/track, then advance it.`,
    );
  if (row.others) throw shared(courier, awb);
}

/**
 * `sink` for an advance's events, checked again in the record's transaction, after the shipment's row is locked
 * (follows add to its follower count, so they queue behind that lock): another account that started following
 * meanwhile refuses the events, and the transaction rolls back. @throws AppError SANDBOX_SHIPMENT_SHARED (409)
 */
export function soleFollowerSink(sink: EventSink, accountId: string, courier: Courier, awb: string): EventSink {
  return async (tx, events) => {
    const ids = [...new Set(events.map((e) => e.shipmentId))];
    if (ids.length === 0) return 0;
    const others = await tx.execute(
      sql`select 1 from follows where account_id <> ${accountId} and shipment_id in (${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )}) limit 1`,
    );
    if (others.length > 0) throw shared(courier, awb);
    return sink(tx, events);
  };
}
