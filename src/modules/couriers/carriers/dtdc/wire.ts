/** DTDC JSONCnTrk `POST /rest/JSONCnTrk/getTrackDetails` (DTDC tracking API document): `DDMMYYYY`, `HHMM`, naive IST. */
import { Type as T, type Static } from "@sinclair/typebox";
import { Any, Opt, OptNull, Text } from "../../adapters/wire/common.ts";

export const DtdcDetail = T.Object({
  strCode: Opt(Text),
  strAction: Opt(Text),
  strManifestNo: Opt(Text),
  strOrigin: Opt(Text),
  strDestination: Opt(Text),
  strActionDate: Opt(Text),
  strActionTime: Opt(Text),
  sTrRemarks: Opt(Text),
  strRemarks: Opt(Text),
});

export const DtdcHeader = T.Object({
  strShipmentNo: Opt(Text),
  strRefNo: Opt(Text),
  strCNType: Opt(Text),
  strCNProduct: Opt(Text),
  strOrigin: Opt(Text),
  strOriginRemarks: Opt(Text),
  strBookedDate: Opt(Text),
  strBookedTime: Opt(Text),
  strPieces: Opt(Text),
  strWeightUnit: Opt(Text),
  strWeight: Opt(Text),
  strDestination: Opt(Text),
  strStatus: Opt(Text),
  strStatusTransOn: Opt(Text),
  strStatusTransTime: Opt(Text),
  strRemarks: Opt(Text),
  strNoOfAttempts: Opt(Text),
  strRtoNumber: Opt(Text),
});

/** A getTrackDetails answer: `statusFlag: true` with details, or `false` with `errorDetails`. */
export const DtdcTrackResponse = T.Object({
  statusCode: Opt(Text),
  statusFlag: T.Boolean(),
  status: Opt(Text),
  errorDetails: Opt(Any),
  trackHeader: OptNull(DtdcHeader),
  trackDetails: OptNull(T.Array(DtdcDetail)),
});

/** The 401 body of a missing or expired token (Spring Boot error shape). */
export const DtdcUnauthorized = T.Object({
  timestamp: Opt(Text),
  status: Opt(Text),
  error: Opt(Text),
  message: Opt(Text),
  path: Opt(Text),
});

export type DtdcDetail = Static<typeof DtdcDetail>;
export type DtdcHeader = Static<typeof DtdcHeader>;
export type DtdcTrackResponse = Static<typeof DtdcTrackResponse>;
export type DtdcUnauthorized = Static<typeof DtdcUnauthorized>;
