/** FedEx Track API and OAuth token answers (developer.fedex.com). */
import { Type as T, type Static } from "@sinclair/typebox";
import { Any, Opt, Text } from "../../adapters/wire/common.ts";

export const FedexAddress = T.Object({
  streetLines: Opt(T.Array(Text)),
  city: Opt(Text),
  stateOrProvinceCode: Opt(Text),
  postalCode: Opt(Text),
  countryCode: Opt(Text),
  countryName: Opt(Text),
  residential: Opt(T.Boolean()),
});

/** `{code, message}`: per number in `trackResults[].error`, per request in `errors[]`. */
const FedexError = T.Object({ code: Opt(Text), message: Opt(Text) });

export const FedexScanEvent = T.Object({
  date: Opt(Text),
  eventType: Opt(Text),
  eventDescription: Opt(Text),
  exceptionCode: Opt(Text),
  exceptionDescription: Opt(Text),
  scanLocation: Opt(FedexAddress),
  locationType: Opt(Text),
  derivedStatusCode: Opt(Text),
  derivedStatus: Opt(Text),
});

const FedexStatusDetail = T.Object({
  code: Opt(Text),
  derivedCode: Opt(Text),
  statusByLocale: Opt(Text),
  description: Opt(Text),
  scanLocation: Opt(FedexAddress),
});

const Party = T.Object({ contact: Opt(Any), address: Opt(FedexAddress) });

/** A FedEx `TimeWindow` (estimate or committed transit window); `begins`/`ends` ISO 8601, offset optional. */
export const FedexTimeWindow = T.Object({
  description: Opt(Text),
  type: Opt(Text),
  window: Opt(T.Object({ begins: Opt(Text), ends: Opt(Text) })),
});

export const FedexTrackResult = T.Object({
  trackingNumberInfo: Opt(
    T.Object({ trackingNumber: Opt(Text), trackingNumberUniqueId: Opt(Text), carrierCode: Opt(Text) }),
  ),
  additionalTrackingInfo: Opt(Any),
  error: Opt(FedexError),
  shipperInformation: Opt(Party),
  recipientInformation: Opt(Party),
  latestStatusDetail: Opt(FedexStatusDetail),
  /** `ACTUAL_DELIVERY`, `ESTIMATED_DELIVERY`, `SHIP`, `ACTUAL_PICKUP`, … */
  dateAndTimes: Opt(T.Array(T.Object({ type: Opt(Text), dateTime: Opt(Text) }))),
  estimatedDeliveryTimeWindow: Opt(FedexTimeWindow),
  standardTransitTimeWindow: Opt(FedexTimeWindow),
  availableImages: Opt(T.Array(T.Object({ type: Opt(Text) }))),
  scanEvents: Opt(T.Array(FedexScanEvent)),
  originLocation: Opt(T.Object({ locationContactAndAddress: Opt(T.Object({ address: Opt(FedexAddress) })) })),
  lastUpdatedDestinationAddress: Opt(FedexAddress),
  serviceDetail: Opt(Any),
  returnDetail: Opt(T.Object({ reasonDetail: Opt(Any) })),
});

/** The Track API answer: `output` on success (per-number errors inside), `errors[]` for a whole-request error. */
export const FedexTrackResponse = T.Object({
  transactionId: Opt(Text),
  output: Opt(
    T.Object({
      completeTrackResults: Opt(
        T.Array(T.Object({ trackingNumber: Opt(Text), trackResults: Opt(T.Array(FedexTrackResult)) })),
      ),
    }),
  ),
  errors: Opt(T.Array(FedexError)),
});

export type FedexScanEvent = Static<typeof FedexScanEvent>;
export type FedexTrackResult = Static<typeof FedexTrackResult>;
export type FedexTimeWindow = Static<typeof FedexTimeWindow>;
export type FedexTrackResponse = Static<typeof FedexTrackResponse>;
export type FedexAddress = Static<typeof FedexAddress>;
