/** Every backend adapter by id (the catalogue's `adapter` field): one line per courier folder under carriers/. */
import type { AdapterId } from "../catalogue.ts";
import { aramexAdapter } from "../carriers/aramex/adapter.ts";
import { bluedartAdapter } from "../carriers/bluedart/adapter.ts";
import { delhiveryAdapter } from "../carriers/delhivery/adapter.ts";
import { dhlAdapter } from "../carriers/dhl/adapter.ts";
import { dtdcAdapter } from "../carriers/dtdc/adapter.ts";
import { ecomexpressAdapter } from "../carriers/ecomexpress/adapter.ts";
import { fedexAdapter } from "../carriers/fedex/adapter.ts";
import { track17Adapter } from "../carriers/track17/adapter.ts";
import { upsAdapter } from "../carriers/ups/adapter.ts";
import { xpressbeesAdapter } from "../carriers/xpressbees/adapter.ts";
import type { CourierAdapter } from "./types.ts";

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
