/** Tracking lookups (spec: GET /v1/track, GET /demo/track); only a 200 consumes the reserved quota unit. */
import type { AppDeps } from "../../deps.ts";
import { AppError } from "../../lib/errors.ts";
import { usageView } from "../accounts/quota.ts";
import type { AuthContext } from "../accounts/service.ts";
import { planOf } from "../../domain/plans.ts";
import { CourierError } from "../couriers/adapters/types.ts";
import { normaliseTrackingNumber, type Courier } from "../couriers/catalogue.ts";
import { CourierBusyError } from "../couriers/lane.ts";
import type { LookupResult } from "../couriers/registry.ts";
import { requireCourier } from "../couriers/service.ts";
import { followingMetrics } from "../metrics/following.ts";
import { observeTrackOwnTime, type TrackResult } from "../metrics/registry.ts";
import { offTheClock, withoutDeadline } from "../../lib/deadline.ts";
import { recentTerminal, rememberFetch } from "./recent.ts";
import { findShipment, recordFetch, rowToRecord } from "../following/store.ts";
import { publicUrls } from "../following/public-links.ts";
import { trackingData, type TrackingData } from "./view.ts";
import { requireSoleFollower, soleFollowerSink } from "./sandbox-guard.ts";

export type TrackingDeps = Pick<
  AppDeps,
  "db" | "clock" | "log" | "config" | "backends" | "onEvents" | "services" | "secretsKey"
>;

/** Resolves and validates courier + number. @throws AppError COURIER_NOT_FOUND, COURIER_NOT_SUPPORTED, INVALID_TRACKING_NUMBER */
export function resolveRequest(
  deps: Pick<TrackingDeps, "backends">,
  slug: string,
  rawNumber: string,
): { courier: Courier; awb: string } {
  const courier = requireCourier(slug);
  if (deps.backends.availability(courier) === "unavailable")
    throw new AppError(
      "COURIER_NOT_SUPPORTED",
      `Tracking for ${courier.name} is not available through the API right now.`,
    );
  const awb = normaliseTrackingNumber(rawNumber);
  if (!courier.awb.pattern.test(awb))
    throw new AppError(
      "INVALID_TRACKING_NUMBER",
      `That is not a ${courier.name} tracking number: expected ${courier.awb.description} (e.g. ${courier.awb.example}).`,
    );
  return { courier, awb };
}

/** Maps a courier failure to the client error (spec: Errors; spec-map Decisions: Courier failures). */
function toAppError(courier: Courier, err: CourierError): AppError {
  if (err instanceof CourierBusyError)
    return new AppError(
      "COURIER_BUSY",
      `Too many ${courier.name} lookups are queued to answer this one in time; retry in ${err.retryAfterSeconds} s.`,
      {},
      { "retry-after": String(err.retryAfterSeconds) },
    );
  switch (err.kind) {
    case "not_found":
      return new AppError("TRACKING_NOT_FOUND", `${courier.name} has no record of this tracking number.`);
    case "invalid_number":
      return new AppError("INVALID_TRACKING_NUMBER", `${courier.name} rejected this tracking number as invalid.`);
    case "timeout":
      return new AppError("TIMEOUT", `${courier.name} did not answer in time; retry shortly.`);
    default:
      // Throttling, auth problems on our side and backend errors all mean "try again later" to the client.
      return new AppError("SERVICE_ERROR", `${courier.name} is temporarily unavailable; retry shortly.`);
  }
}

/**
 * Fetches, stores and renders one shipment; a terminal one fetched recently is reused (recent.ts).
 * @param followAccountId the account that starts following (none for the demo).
 * @throws AppError TRACKING_NOT_FOUND | INVALID_TRACKING_NUMBER | TIMEOUT | SERVICE_ERROR
 */
async function fetchAndStore(
  deps: TrackingDeps,
  courier: Courier,
  awb: string,
  startedMs: number,
  followAccountId?: string,
  reuse = true,
  timing: { courierMs: number } = { courierMs: 0 },
): Promise<TrackingData> {
  const recent = reuse
    ? recentTerminal(
        deps.services.recentFetches,
        courier.slug,
        awb,
        deps.clock.now(),
        deps.config.terminalReuseSeconds * 1000,
      )
    : undefined;
  if (recent)
    return trackingData(courier, recent, { fetchMs: 0, executionMs: performance.now() - startedMs, noRecord: false });
  let lookup: LookupResult;
  const calling = performance.now();
  try {
    // The courier call has its own budget (lane and COURIER_TIMEOUT_MS): it does not spend the database deadline.
    lookup = await offTheClock(() => deps.backends.lookup(courier, awb));
  } catch (err) {
    timing.courierMs = performance.now() - calling;
    if (!(err instanceof CourierError)) throw err;
    deps.log.info("courier lookup failed", { courier: courier.slug, kind: err.kind, status: err.httpStatus });
    followingMetrics.courierErrors.inc({ courier: courier.slug, kind: err.kind, retryable: String(err.retryable) });
    if (err.kind === "not_found") {
      // spec-map Decisions, Data fields: a shipment stored before that the courier no longer knows → the stored history.
      const stored = await findShipment(deps.db, courier.slug, awb);
      if (stored?.lastCheckedAt)
        return trackingData(courier, rowToRecord(stored), {
          fetchMs: 0,
          executionMs: performance.now() - startedMs,
          noRecord: true,
        });
    }
    throw toAppError(courier, err);
  }
  timing.courierMs = performance.now() - calling;
  const nowMs = deps.clock.now();
  const history = await deps.services.transitStats.get();
  const { shipment, event, followed } = await recordFetch(deps.db, courier, awb, lookup.snapshot, {
    predict: (c, r) => history.predict(c, r),
    followAccountId,
    nowMs,
    recheckIntervalSeconds: deps.config.recheckIntervalSeconds,
    onEvents: deps.onEvents,
    fetchRead: deps.services.fetchRead,
  });
  // A new follow gets its public link now, so its first event's payload carries `public_url` (docs/tracking-page.md).
  if (followed && followAccountId) await publicUrls(deps, followAccountId, [shipment.id]);
  // A lookup is a re-check too (spec-map Decisions: Re-checks): its events count with the scheduled ones.
  if (event) followingMetrics.events.inc({ type: event });
  const record = rowToRecord(shipment);
  rememberFetch(deps.services.recentFetches, courier.slug, awb, record, nowMs);
  const pins = { originPincode: shipment.originPincode, destinationPincode: shipment.destinationPincode };
  const extra = {
    predicted: history.predict(courier.slug, { ...record, ...pins }),
    stalled: shipment.stalledAt !== null,
  };
  return trackingData(
    courier,
    record,
    { fetchMs: lookup.fetchMs, executionMs: performance.now() - startedMs, noRecord: false },
    extra,
  );
}

/** Couriers' failures passed on (spec: Errors): the lookup SLO does not count them against us. */
const COURIER_CODES: ReadonlySet<string> = new Set(["SERVICE_ERROR", "TIMEOUT", "COURIER_BUSY"]);

function trackResult(err: unknown): TrackResult {
  if (!(err instanceof AppError)) return "server_error";
  if (COURIER_CODES.has(err.code)) return "courier_error";
  return err.status >= 500 ? "server_error" : "client_error";
}

/**
 * `GET /v1/track` for an account: a quota unit reserved first, given back unless the answer is 200. Its database
 * waits share the request's deadline (src/lib/deadline.ts); the courier call is bounded by its own budget. Records
 * its own time (the courier call's excluded) for the lookup SLO (docs/operations/slo.md).
 */
export async function trackForAccount(deps: TrackingDeps, auth: AuthContext, slug: string, rawNumber: string) {
  const started = performance.now();
  const timing = { courierMs: 0 };
  let result: TrackResult = "ok";
  try {
    return await trackOnce(deps, auth, slug, rawNumber, started, timing);
  } catch (err) {
    result = trackResult(err);
    throw err;
  } finally {
    observeTrackOwnTime(result, (performance.now() - started - timing.courierMs) / 1000);
  }
}

async function trackOnce(
  deps: TrackingDeps,
  auth: AuthContext,
  slug: string,
  rawNumber: string,
  started: number,
  timing: { courierMs: number },
) {
  const { courier, awb } = resolveRequest(deps, slug, rawNumber);
  if (auth.account.status === "needs_attention")
    throw new AppError("ACCOUNT_NEEDS_ATTENTION", "This account needs attention; contact support to restore tracking.");
  const plan = planOf(auth.account.plan);
  const leases = deps.services.quotaLeases;
  const reservation = await leases.reserve(auth.account.id, plan.monthly_quota, deps.clock.now());
  if (!reservation.ok)
    throw new AppError(
      "QUOTA_EXCEEDED",
      `Monthly quota of ${plan.monthly_quota} tracking requests used up on the ${plan.name} plan. Upgrade at ${deps.config.publicBaseUrl}/dashboard/billing`,
    );
  try {
    const data = await fetchAndStore(deps, courier, awb, started, auth.account.id, true, timing);
    // The units counted when the answer is produced, by any path of this process (accounts/quota-lease.ts).
    const used = leases.usedNow(auth.account.id, reservation.period) ?? reservation.used;
    const warning = courierWarning(deps, courier);
    return {
      success: true as const,
      data,
      usage: usageView(used, plan.monthly_quota, plan.id),
      ...(warning ? { courier_warning: warning } : {}),
    };
  } catch (err) {
    // Owed at once, so later answers count without it; the give-back statement runs without this request's
    // deadline and does not hold its answer (a failed one is sent again with the next: accounts/quota-lease.ts).
    void withoutDeadline(() => leases.release(auth.account.id, reservation)).catch((e: unknown) =>
      deps.log.error("quota release failed", { error: e }),
    );
    throw err;
  }
}

/** The warning an answer carries while its courier is degraded or down (docs/courier-health.md), else undefined. */
function courierWarning(deps: TrackingDeps, courier: Courier) {
  const h = deps.services.courierHealth.summary(courier.slug);
  if ((h.state !== "degraded" && h.state !== "down") || h.since === null) return undefined;
  const how = h.state === "down" ? "failing" : "slow or failing";
  return {
    state: h.state,
    since: h.since,
    message: `${courier.name}'s tracking API is ${how} right now; this answer may be out of date.`,
  };
}

/** `GET /demo/track`: no account, no quota, nobody starts following. */
export async function trackDemo(deps: TrackingDeps, slug: string, rawNumber: string) {
  const started = performance.now();
  const { courier, awb } = resolveRequest(deps, slug, rawNumber);
  return { success: true as const, data: await fetchAndStore(deps, courier, awb, started) };
}

/**
 * Sandbox advance of a shipment the account alone follows: the simulator moves it to its next state, then it is
 * looked up like any shipment (no reuse, no quota, no follow made), so its events and webhooks go out as in
 * production, to this account's webhooks only (docs/spec-map.md#sandbox).
 * @throws AppError NOT_FOUND when the simulator does not answer this courier; SHIPMENT_NOT_FOLLOWED (404) or
 * SANDBOX_SHIPMENT_SHARED (409) from {@link requireSoleFollower}; otherwise a lookup's errors.
 */
export async function advanceSandboxForAccount(deps: TrackingDeps, auth: AuthContext, slug: string, rawNumber: string) {
  const started = performance.now();
  const { courier, awb } = resolveRequest(deps, slug, rawNumber);
  if (deps.backends.availability(courier) !== "sandbox")
    throw new AppError("NOT_FOUND", `${courier.name} is not answered by the sandbox simulator here.`);
  const accountId = auth.account.id;
  await requireSoleFollower(deps.db, accountId, courier, awb);
  deps.backends.advanceSandbox(courier, awb);
  const guarded = { ...deps, onEvents: soleFollowerSink(deps.onEvents, accountId, courier, awb) };
  return { success: true as const, data: await fetchAndStore(guarded, courier, awb, started, undefined, false) };
}
