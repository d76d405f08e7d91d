/** Aramex `TrackShipments` answer as fast-xml-parser reads it (namespace prefixes removed). */
import { Type as T, type Static } from "@sinclair/typebox";
import { OneOrMany, Opt, OrEmpty, XmlText } from "../../adapters/wire/common.ts";

/** One update: naive `UpdateDateTime` (`2016-05-31T16:00:00`), `SHnnn` codes, `ProblemCode` empty unless a problem. */
export const AramexTrackingResult = T.Object({
  WaybillNumber: Opt(XmlText),
  UpdateCode: Opt(XmlText),
  UpdateDescription: Opt(XmlText),
  UpdateDateTime: Opt(XmlText),
  UpdateLocation: Opt(XmlText),
  Comments: Opt(XmlText),
  ProblemCode: Opt(XmlText),
  GrossWeight: Opt(XmlText),
  ChargeableWeight: Opt(XmlText),
  WeightUnit: Opt(XmlText),
});

/** One WCF dictionary entry: the waybill (`a:Key`) and its updates (`a:Value`, empty when there are none yet). */
export const AramexResultPair = T.Object({
  Key: Opt(XmlText),
  Value: Opt(OrEmpty(T.Object({ TrackingResult: Opt(OneOrMany(AramexTrackingResult)) }))),
});

/** `TrackingResults`: WCF appends a contract hash to the entry name, so it is matched by prefix. */
const AramexTrackingResults = T.Record(
  T.TemplateLiteral([T.Literal("KeyValueOfstringArrayOfTrackingResult"), T.String()]),
  OneOrMany(AramexResultPair),
);

/** One `Notification`: `Code` (ERR01 …) and `Message`. */
export const AramexNotification = T.Object({ Code: Opt(XmlText), Message: Opt(XmlText) });

/** `ShipmentTrackingResponse`: errors as `HasErrors` + notifications (ERR01 bad credentials), unknown numbers in `NonExistingWaybills`. */
export const AramexTrackingResponse = T.Object({
  Transaction: Opt(OrEmpty(T.Object({ "@nil": Opt(XmlText) }))),
  Notifications: Opt(OrEmpty(T.Object({ Notification: Opt(OneOrMany(AramexNotification)) }))),
  HasErrors: Opt(XmlText),
  TrackingResults: Opt(OrEmpty(AramexTrackingResults)),
  NonExistingWaybills: Opt(OrEmpty(T.Object({ string: Opt(OneOrMany(XmlText)) }))),
});

/** A SOAP 1.1 `s:Fault` (WCF sends it with HTTP 500; `<s:Fault/>` parses as ""). */
const AramexFault = OrEmpty(T.Object({ faultcode: Opt(XmlText), faultstring: Opt(XmlText) }));

/** The envelope: its body holds the response or a fault. */
export const AramexDocument = T.Object({
  Envelope: T.Object({
    Body: T.Object({ ShipmentTrackingResponse: Opt(AramexTrackingResponse), Fault: Opt(AramexFault) }),
  }),
});

export type AramexTrackingResult = Static<typeof AramexTrackingResult>;
export type AramexResultPair = Static<typeof AramexResultPair>;
export type AramexNotification = Static<typeof AramexNotification>;
export type AramexTrackingResponse = Static<typeof AramexTrackingResponse>;
export type AramexDocument = Static<typeof AramexDocument>;
