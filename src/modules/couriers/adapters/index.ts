/** Every backend adapter by id (the catalogue's `adapter` field), from the courier registry (../carriers/index.ts). */
import type { AdapterId } from "../catalogue.ts";
import { CARRIERS } from "../carriers/index.ts";
import type { CourierAdapter } from "./types.ts";

export const ADAPTERS = Object.fromEntries(CARRIERS.map((c) => [c.id, c.adapter])) as Readonly<
  Record<AdapterId, CourierAdapter>
>;
