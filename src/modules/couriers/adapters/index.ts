/** Every backend adapter by id (the catalogue's `adapter` field). */
import type { AdapterId } from "../catalogue.ts";
import { aramexAdapter } from "./aramex.ts";
import { bluedartAdapter } from "./bluedart.ts";
import { delhiveryAdapter } from "./delhivery.ts";
import { dhlAdapter } from "./dhl.ts";
import { dtdcAdapter } from "./dtdc.ts";
import { ecomexpressAdapter } from "./ecomexpress.ts";
import { fedexAdapter } from "./fedex.ts";
import { track17Adapter } from "./track17.ts";
import type { CourierAdapter } from "./types.ts";
import { upsAdapter } from "./ups.ts";
import { xpressbeesAdapter } from "./xpressbees.ts";

export const ADAPTERS: Readonly<Record<AdapterId, CourierAdapter>> = {
  delhivery: delhiveryAdapter,
  bluedart: bluedartAdapter,
  dhl: dhlAdapter,
  fedex: fedexAdapter,
  ups: upsAdapter,
  dtdc: dtdcAdapter,
  aramex: aramexAdapter,
  ecomexpress: ecomexpressAdapter,
  xpressbees: xpressbeesAdapter,
  track17: track17Adapter,
};
