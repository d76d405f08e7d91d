/** UPS Tracking API v1 `GET /api/track/v1/details/{n}` and `POST /security/v1/oauth/token` (developer.ups.com). */
import { Type as T, type Static } from "@sinclair/typebox";
import { Opt, Text } from "../../adapters/wire/common.ts";

export const UpsAddress = T.Object({
  city: Opt(Text),
  stateProvince: Opt(Text),
  countryCode: Opt(Text),
  country: Opt(Text),
  postalCode: Opt(Text),
});

/** An activity's `status` and the package's `currentStatus`. */
export const UpsStatus = T.Object({
  type: Opt(Text),
  code: Opt(Text),
  description: Opt(Text),
  statusCode: Opt(Text),
  simplifiedTextDescription: Opt(Text),
});

export const UpsActivity = T.Object({
  location: Opt(T.Object({ address: Opt(UpsAddress), slic: Opt(Text) })),
  status: Opt(UpsStatus),
  /** `YYYYMMDD`, local. */
  date: Opt(Text),
  /** `HHMMSS`, local. */
  time: Opt(Text),
});

/** `{code, message}` of `response.errors[]` and `shipment[].warnings[]`. */
const UpsMessage = T.Object({ code: Opt(Text), message: Opt(Text) });

export const UpsPackage = T.Object({
  trackingNumber: Opt(Text),
  /** `{type, date YYYYMMDD}`: SDD scheduled, RDD rescheduled (the EDD), DEL delivered. */
  deliveryDate: Opt(T.Array(T.Object({ type: Opt(Text), date: Opt(Text) }))),
  deliveryTime: Opt(T.Object({ type: Opt(Text), startTime: Opt(Text), endTime: Opt(Text) })),
  deliveryInformation: Opt(
    T.Object({
      location: Opt(Text),
      receivedBy: Opt(Text),
      deliveryPhoto: Opt(
        T.Object({ isNonPostalCodeCountry: Opt(T.Boolean()), photo: Opt(Text), photoCaptureInd: Opt(Text) }),
      ),
    }),
  ),
  currentStatus: Opt(UpsStatus),
  packageAddress: Opt(T.Array(T.Object({ type: Opt(Text), address: Opt(UpsAddress) }))),
  activity: Opt(T.Array(UpsActivity)),
  packageCount: Opt(Text),
});

/** Any Track API answer: `trackResponse` (not found is a `TW0001` warning inside it) or `response.errors[]`. */
export const UpsTrackResponse = T.Object({
  trackResponse: Opt(
    T.Object({
      shipment: Opt(
        T.Array(
          T.Object({ inquiryNumber: Opt(Text), package: Opt(T.Array(UpsPackage)), warnings: Opt(T.Array(UpsMessage)) }),
        ),
      ),
    }),
  ),
  response: Opt(T.Object({ errors: Opt(T.Array(UpsMessage)) })),
});

export type UpsActivity = Static<typeof UpsActivity>;
export type UpsStatus = Static<typeof UpsStatus>;
export type UpsAddress = Static<typeof UpsAddress>;
export type UpsPackage = Static<typeof UpsPackage>;
export type UpsTrackResponse = Static<typeof UpsTrackResponse>;
