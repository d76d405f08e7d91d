/** Sandbox scenarios (docs/spec-map.md#sandbox): a number's last digit picks the timeline every twin renders. */
export type SimEventKind =
  | "manifested"
  | "picked_up"
  | "in_transit"
  | "reached_destination"
  | "out_for_delivery"
  | "delivered"
  | "delivery_failed"
  | "rto_initiated"
  | "returned"
  | "cancelled";

export interface SimEvent {
  kind: SimEventKind;
  at: number;
  location: string;
  remark: string | null;
}

export type Scenario =
  | {
      kind: "found";
      events: SimEvent[];
      origin: string;
      destination: string;
      podUrl: string | null;
      /** digit 7: manifested, no scans */
      noScans: boolean;
      edd: string | null;
    }
  | { kind: "not_found" }
  | { kind: "timeout" }
  | { kind: "server_error" };

const CITIES = [
  "Mumbai",
  "Delhi",
  "Bengaluru",
  "Chennai",
  "Kolkata",
  "Hyderabad",
  "Pune",
  "Ahmedabad",
  "Jaipur",
  "Lucknow",
  "Kochi",
  "Indore",
] as const;
/** The city at `i`, wrapping round the list. */
const cityAt = (i: number): string => CITIES[i % CITIES.length] ?? CITIES[0];
const HOUR = 3_600_000;

/** The last decimal digit in the number (S10 numbers end in letters: EE123456780IN → 0). */
export function scenarioDigit(trackingNumber: string): number {
  for (let i = trackingNumber.length - 1; i >= 0; i--) {
    const c = trackingNumber.charCodeAt(i);
    if (c >= 48 && c <= 57) return c - 48;
  }
  return 1;
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The scenario for `trackingNumber` as of `nowMs`; digit 9 is digit 1's timeline (the aggregator adds the delay). */
export function scenarioFor(
  trackingNumber: string,
  firstSeenMs: number,
  nowMs: number,
  stepSeconds: number,
  pulled?: ReadonlyMap<number, number>,
): Scenario {
  const digit = scenarioDigit(trackingNumber);
  if (digit === 4) return { kind: "not_found" };
  if (digit === 5) return { kind: "timeout" };
  if (digit === 6) return { kind: "server_error" };
  const h = hash(trackingNumber);
  const at = h % CITIES.length;
  const origin = cityAt(at);
  let destination = cityAt(h >>> 8);
  if (destination === origin) destination = cityAt(at + 5);
  const hub = cityAt(at + 3) === destination ? cityAt(at + 4) : cityAt(at + 3);
  // History before first sight sits on whole minutes, so every courier format (HH:MM) round-trips
  // exactly; steps count from the real first sight, so a short step (tests) is never seen early.
  const F = Math.floor(firstSeenMs / 60_000) * 60_000;
  const S = stepSeconds * 1000;
  // A step pulled forward by the advance endpoint happens when it was pulled (see {@link nextStep}).
  const step = (k: number) => pulled?.get(k) ?? firstSeenMs + k * S;
  const { events, podUrl, noScans } = timelineOf(
    digit,
    trackingNumber,
    nowMs,
    { F, step },
    { origin, hub, destination },
  );
  const visible = events.filter((e) => e.at <= nowMs);
  let edd = estimateOf(events, visible);
  if (
    edd &&
    digit === 1 &&
    revisesEdd(trackingNumber) &&
    nowMs >= step(1) &&
    !visible.some((e) => e.kind === "delivered")
  )
    edd = addDays(edd, EDD_REVISION_DAYS);
  return { kind: "found", events: visible, origin, destination, podUrl, noScans, edd };
}

/** Digit-1 numbers whose two digits before the last are these (…991) revise the courier's EDD at their first step. */
const EDD_REVISION_DIGITS = "99";
/** How far that revision moves the EDD, in calendar days (later: a delay, the usual reason couriers revise). */
const EDD_REVISION_DAYS = 2;

/** Whether `trackingNumber` is one of the EDD-revising numbers ({@link EDD_REVISION_DIGITS}). */
function revisesEdd(trackingNumber: string): boolean {
  const m = /(\d\d)\d\D*$/.exec(trackingNumber);
  return m?.[1] === EDD_REVISION_DIGITS;
}

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const ev = (kind: SimEventKind, at: number, location: string, remark: string | null = null): SimEvent => ({
  kind,
  at,
  location,
  remark,
});

/** Digit `digit`'s whole timeline, future steps included: `F` is first sight on a whole minute, `step(k)` step k's time. */
function timelineOf(
  digit: number,
  trackingNumber: string,
  nowMs: number,
  { F, step }: { F: number; step: (k: number) => number },
  { origin, hub, destination }: { origin: string; hub: string; destination: string },
): { events: SimEvent[]; podUrl: string | null; noScans: boolean } {
  const early = [
    ev("manifested", F - 72 * HOUR, origin),
    ev("picked_up", F - 70 * HOUR, origin),
    ev("in_transit", F - 60 * HOUR, origin),
  ];
  let events: SimEvent[];
  let podUrl: string | null = null;
  let noScans = false;
  switch (digit) {
    case 0:
      events = [
        ...early,
        ev("in_transit", F - 40 * HOUR, hub),
        ev("reached_destination", F - 20 * HOUR, destination),
        ev("out_for_delivery", F - 5 * HOUR, destination),
        ev("delivered", F - 2 * HOUR, destination),
      ];
      podUrl = `https://pod.sandbox.example/${trackingNumber}.jpg`;
      break;
    case 1:
    case 9:
      events = [
        ...early,
        ev("in_transit", step(1), hub),
        ev("reached_destination", step(2), destination),
        ev("out_for_delivery", step(3), destination),
        ev("delivered", step(4), destination),
      ];
      podUrl = nowMs >= step(4) ? `https://pod.sandbox.example/${trackingNumber}.jpg` : null;
      break;
    case 2:
      events = [
        ...early,
        ev("reached_destination", F - 20 * HOUR, destination),
        ev("out_for_delivery", F - HOUR, destination),
        ev("delivered", step(1), destination),
      ];
      podUrl = nowMs >= step(1) ? `https://pod.sandbox.example/${trackingNumber}.jpg` : null;
      break;
    case 3:
      events = [
        ...early,
        ev("reached_destination", F - 20 * HOUR, destination),
        ev("out_for_delivery", F - 6 * HOUR, destination),
        ev("delivery_failed", F - HOUR, destination, failedAttemptRemark(trackingNumber)),
        ev("rto_initiated", step(1), destination, "Return to origin initiated after failed attempts"),
        ev("returned", step(2), origin),
      ];
      break;
    case 7:
      events = [ev("manifested", F - 2 * HOUR, origin)];
      noScans = true;
      break;
    case 8:
      events = [ev("manifested", F - 30 * HOUR, origin), ev("cancelled", F - 2 * HOUR, origin, "Cancelled by shipper")];
      break;
    default:
      events = early;
  }
  return { events, podUrl, noScans };
}

/** The next hidden step with an event (1-based), which the advance endpoint pulls forward; or undefined. */
export function nextStep(
  trackingNumber: string,
  firstSeenMs: number,
  nowMs: number,
  stepSeconds: number,
  pulled: ReadonlyMap<number, number>,
): number | undefined {
  const all = scenarioFor(trackingNumber, firstSeenMs, Number.MAX_SAFE_INTEGER, stepSeconds, pulled);
  if (all.kind !== "found") return undefined;
  for (let k = 1; k <= 8; k++) {
    const at = pulled.get(k) ?? firstSeenMs + k * stepSeconds * 1000;
    if (at > nowMs && all.events.some((e) => e.at === at)) return k;
  }
  return undefined;
}

/** Digit 3's failed-attempt remark, one per reason family (docs/ndr.md), picked by the two digits before the last. */
export const FAILED_ATTEMPT_REMARKS: Readonly<Record<number, string>> = {
  20: "Consignee not available",
  21: "Consignee refused to accept the shipment",
  22: "Incomplete address, house not found",
  23: "COD amount not ready",
  24: "Consignee asked to reschedule delivery",
  25: "Office closed",
  26: "Out of delivery area",
  27: "Shipment damaged in transit",
  28: "Shipment lost in transit",
  29: "Heavy rain, delivery not possible",
  30: "Shipment held: awaiting instructions",
};

/** The reason family (a key of {@link FAILED_ATTEMPT_REMARKS}) whose remark is `remark`, so a twin can render its courier's code for it. */
export function failedAttemptFamily(remark: string | null): number | undefined {
  for (const [n, text] of Object.entries(FAILED_ATTEMPT_REMARKS)) if (text === remark) return Number(n);
  return undefined;
}

function failedAttemptRemark(trackingNumber: string): string {
  const m = /(\d)(\d)\d\D*$/.exec(trackingNumber);
  const n = m ? Number(m[1]) * 10 + Number(m[2]) : -1;
  return FAILED_ATTEMPT_REMARKS[n] ?? "Consignee not available";
}

/**
 * The EDD a courier would show now, `YYYY-MM-DD` in IST: the planned delivery day, from pickup on; none while only
 * manifested, cancelled or returning. Each twin keeps or drops it after delivery as its courier does.
 */
function estimateOf(all: readonly SimEvent[], visible: readonly SimEvent[]): string | null {
  const planned = all.find((e) => e.kind === "delivered") ?? all.findLast((e) => e.kind === "out_for_delivery");
  if (!planned || !visible.some((e) => e.kind === "picked_up")) return null;
  if (visible.some((e) => e.kind === "cancelled" || e.kind === "rto_initiated" || e.kind === "returned")) return null;
  return wallTime(planned.at, 330).date;
}

/** The first visible event of a found scenario (scenarioFor always shows one). @throws Error when there is none */
export function firstEvent(s: Extract<Scenario, { kind: "found" }>): SimEvent {
  const e = s.events[0];
  if (!e) throw new Error("scenario without a visible event");
  return e;
}

/** The newest visible event of a found scenario. @throws Error when there is none */
export function latest(s: Extract<Scenario, { kind: "found" }>): SimEvent {
  const e = s.events.at(-1);
  if (!e) throw new Error("scenario without a visible event");
  return e;
}

/** Two digits (`5` → `05`), without `padStart` (twins render thousands of these per second under load). */
const p2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** Wall time of `ms` at a fixed UTC offset, as parts (used by twins to render local times). */
export function wallTime(ms: number, offsetMin: number) {
  const d = new Date(ms + offsetMin * 60_000);
  const y = d.getUTCFullYear(),
    mo = d.getUTCMonth() + 1,
    day = d.getUTCDate(),
    h = d.getUTCHours(),
    mi = d.getUTCMinutes(),
    s = d.getUTCSeconds();
  const date = `${y}-${p2(mo)}-${p2(day)}`;
  const time = `${p2(h)}:${p2(mi)}:${p2(s)}`;
  const abs = Math.abs(offsetMin);
  return {
    y,
    mo,
    d: day,
    h,
    mi,
    s,
    date,
    time,
    iso: `${date}T${time}${offsetMin === 0 ? "Z" : `${offsetMin < 0 ? "-" : "+"}${p2(Math.floor(abs / 60))}:${p2(abs % 60)}`}`,
  };
}
