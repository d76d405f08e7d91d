/**
 * The estimated delivery date (EDD) through the courier simulator: one
 * courier's numbers for digits 1 (in transit, then delivered), 3 (failed
 * attempt, then on its way back), 7 (manifested, no scans) and 8 (cancelled),
 * looked up at first sight and again four 1-hour steps later, each with the
 * state the adapter read and the EDD it parsed from the twin's answer.
 * NETWORK SAFETY: the simulator listens on 127.0.0.1 only.
 */
import { FakeClock } from "../../src/lib/clock.ts";
import type { TrackingSnapshot } from "../../src/domain/checkpoint.ts";
import { courierBySlug } from "../../src/modules/couriers/catalogue.ts";
import { sandboxBackends } from "./backends.ts";

/** First sight at 16:00 UTC (21:30 IST). */
export const EDD_T0 = Date.UTC(2026, 10, 5, 16, 0);
/**
 * A digit-1 number first seen at {@link EDD_T0} is delivered four 1-hour steps
 * later, 20:00 UTC = 01:30 IST on the 6th: its EDD is the IST day, not the UTC one.
 */
export const EDD_DAY_DIGIT1 = "2026-11-06";
/** A digit-3 number's last out-for-delivery is 6 h before first sight: 10:00 UTC = 15:30 IST on the 5th. */
export const EDD_DAY_DIGIT3 = "2026-11-05";

const stateOf = (s: TrackingSnapshot) =>
  s.summary?.state ?? [...s.checkpoints].sort((a, b) => (a.at < b.at ? 1 : -1))[0]?.state ?? "pending";

export interface EddSeen {
  state: string;
  edd: string | null;
}

/** `numbers(d)`: a valid number of `slug` whose last digit is `d`. */
export async function eddJourney(slug: string, numbers: (digit: 1 | 3 | 7 | 8) => string) {
  const clock = new FakeClock(EDD_T0);
  const sb = sandboxBackends(clock);
  const courier = courierBySlug(slug)!;
  const look = async (n: string): Promise<EddSeen> => {
    const { snapshot } = await sb.backends.lookup(courier, n);
    return { state: stateOf(snapshot), edd: snapshot.estimatedDelivery ?? null };
  };
  try {
    const [inTransit, failedAttempt, manifested, cancelled] = await Promise.all(
      [1, 3, 7, 8].map((d) => look(numbers(d as 1 | 3 | 7 | 8))),
    );
    const first = {
      inTransit: inTransit!,
      failedAttempt: failedAttempt!,
      manifested: manifested!,
      cancelled: cancelled!,
    };
    clock.advance(4 * 3_600_000);
    return { ...first, delivered: await look(numbers(1)), returned: await look(numbers(3)) };
  } finally {
    await sb.close();
  }
}

/** What every twin answers for the scenarios without a delivery-time choice. */
export const EDD_COMMON = {
  inTransit: { state: "in_transit", edd: EDD_DAY_DIGIT1 },
  failedAttempt: { state: "exception", edd: EDD_DAY_DIGIT3 },
  manifested: { state: "pending", edd: null },
  cancelled: { state: "cancelled", edd: null },
};
