import type { Twin } from "../twin.ts";
import { aramexTwin } from "./aramex.ts";
import { bluedartTwin } from "./bluedart.ts";
import { delhiveryTwin } from "./delhivery.ts";
import { dhlTwin } from "./dhl.ts";
import { dtdcTwin } from "./dtdc.ts";
import { ecomexpressTwin } from "./ecomexpress.ts";
import { fedexTwin } from "./fedex.ts";
import { track17Twin } from "./track17.ts";
import { upsTwin } from "./ups.ts";
import { xpressbeesTwin } from "./xpressbees.ts";

export const TWINS: readonly Twin[] = [delhiveryTwin, bluedartTwin, dhlTwin, fedexTwin, upsTwin, dtdcTwin, aramexTwin, ecomexpressTwin, xpressbeesTwin, track17Twin];
