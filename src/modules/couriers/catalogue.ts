/** The curated courier catalogue (spec: Resources, Courier), derived from the courier registry (carriers/index.ts). */
import type { CourierDefinition } from "./adapters/define.ts";
import type { Courier as AnyCourier } from "./adapters/courier.ts";
import { CARRIERS } from "./carriers/index.ts";

/** A courier folder's id (its adapter, twin and backend name). */
export type AdapterId = (typeof CARRIERS)[number]["id"];
export type Courier = AnyCourier<AdapterId>;

const COUNTRIES: readonly Courier["country"][] = ["india", "international"];

/**
 * The catalogue of `carriers` in the order `/v1/couriers` lists it: India first, then international; within a
 * country the couriers with an adapter of their own, then those an aggregator serves; registry order otherwise.
 */
export function catalogueOf<Id extends string>(carriers: readonly CourierDefinition<Id>[]): AnyCourier<Id>[] {
  const own = carriers.flatMap((c) => (c.courier ? [{ ...c.courier, adapter: c.id }] : []));
  const served = carriers.flatMap((c) => (c.serves ?? []).map((e) => ({ ...e, adapter: c.id })));
  return COUNTRIES.flatMap((country) =>
    [...own, ...served].filter((e) => e.country === country).map((e) => ({ follow: "scheduled" as const, ...e })),
  );
}

export const COURIERS: readonly Courier[] = catalogueOf(CARRIERS);

/** The courier backends (folder names), in registry order. */
export const COURIER_BACKENDS: readonly AdapterId[] = CARRIERS.map((c) => c.id);

/** Environment prefixes of the courier variables (`DHL` → `DHL_API_KEY`, `DHL_BASE_URL`). */
export const COURIER_ENV_PREFIXES: readonly string[] = CARRIERS.flatMap((c) => [
  c.adapter.envPrefix,
  ...(c.otherEnvPrefixes ?? []),
]);

const BY_SLUG = new Map(COURIERS.map((c) => [c.slug, c]));

export function courierBySlug(slug: string): Courier | undefined {
  return BY_SLUG.get(slug);
}

/** Normalises a tracking number as customers type it: trims, drops spaces and hyphens, upper-cases. */
export function normaliseTrackingNumber(raw: string): string {
  return raw
    .trim()
    .replace(/[\s-]+/g, "")
    .toUpperCase();
}
