/** Every courier twin by adapter id, loaded only from here (test/architecture/imports.test.ts). */
import type { AdapterId } from "../modules/couriers/catalogue.ts";
import { aramexTwin } from "../modules/couriers/carriers/aramex/twin.ts";
import { bluedartTwin } from "../modules/couriers/carriers/bluedart/twin.ts";
import { delhiveryTwin } from "../modules/couriers/carriers/delhivery/twin.ts";
import { dhlTwin } from "../modules/couriers/carriers/dhl/twin.ts";
import { dtdcTwin } from "../modules/couriers/carriers/dtdc/twin.ts";
import { ecomexpressTwin } from "../modules/couriers/carriers/ecomexpress/twin.ts";
import { fedexTwin } from "../modules/couriers/carriers/fedex/twin.ts";
import { track17Twin } from "../modules/couriers/carriers/track17/twin.ts";
import { upsTwin } from "../modules/couriers/carriers/ups/twin.ts";
import { xpressbeesTwin } from "../modules/couriers/carriers/xpressbees/twin.ts";
import type { Twin } from "./twin.ts";

export const TWINS: Readonly<Record<AdapterId, Twin>> = {
  delhivery: delhiveryTwin,
  bluedart: bluedartTwin,
  dhl: dhlTwin,
  fedex: fedexTwin,
  ups: upsTwin,
  dtdc: dtdcTwin,
  aramex: aramexTwin,
  ecomexpress: ecomexpressTwin,
  xpressbees: xpressbeesTwin,
  track17: track17Twin,
};
