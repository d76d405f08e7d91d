/** A catalogue courier (spec: Resources, Courier), in its own file so the adapter contract and the catalogue share it. */

export interface Courier<A extends string = string> {
  slug: string;
  name: string;
  country: "india" | "international";
  awb: { pattern: RegExp; description: string; example: string };
  /** The courier folder (backend) that answers it. */
  adapter: A;
  /** 17TRACK carrier code, for couriers served through the aggregator. */
  track17Carrier?: number;
  /** `scheduled`: re-checked `RECHECKS_PER_DAY` times a day (src/domain/following.ts); `lookup`: only on request. */
  follow: "scheduled" | "lookup";
}

/** A catalogue entry as a courier folder writes it: the adapter is the folder's own, `follow` defaults to `scheduled`. */
export type CatalogueEntry = Omit<Courier, "adapter" | "follow"> & Partial<Pick<Courier, "follow">>;
