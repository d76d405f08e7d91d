/** Blue Dart TnT `custawbquery` XML as fast-xml-parser reads it (fixtures/tnt.xml); naive IST. */
import { Type as T, type Static } from "@sinclair/typebox";
import { OneOrMany, Opt, OrEmpty, XmlText } from "../../adapters/wire/common.ts";

export const BluedartScan = T.Object({
  Scan: Opt(XmlText),
  ScanCode: Opt(XmlText),
  /** `T` or `S`: the table a `ScanCode` belongs to (the same number means different scans in each; README.md). */
  ScanGroupType: Opt(XmlText),
  ScanType: Opt(XmlText),
  ScanDate: Opt(XmlText),
  ScanTime: Opt(XmlText),
  ScannedLocation: Opt(XmlText),
});

export const BluedartShipment = T.Object({
  "@WaybillNo": Opt(XmlText),
  "@RefNo": Opt(XmlText),
  Service: Opt(XmlText),
  PickUpDate: Opt(XmlText),
  Origin: Opt(XmlText),
  Destination: Opt(XmlText),
  ProductType: Opt(XmlText),
  Status: Opt(XmlText),
  StatusType: Opt(XmlText),
  StatusDate: Opt(XmlText),
  StatusTime: Opt(XmlText),
  ReceivedBy: Opt(XmlText),
  /** The EDD (optional element; same date formats as `StatusDate`). */
  ExpectedDeliveryDate: Opt(XmlText),
  Scans: Opt(OrEmpty(T.Object({ ScanDetail: Opt(OneOrMany(BluedartScan)) }))),
});

/** `<ShipmentData>` with shipments, or with an `<Error>` text (licence, wrong waybill). */
export const BluedartDocument = T.Object({
  ShipmentData: OrEmpty(T.Object({ Error: Opt(XmlText), Shipment: Opt(OneOrMany(BluedartShipment)) })),
});

export type BluedartScan = Static<typeof BluedartScan>;
export type BluedartShipment = Static<typeof BluedartShipment>;
export type BluedartDocument = Static<typeof BluedartDocument>;
