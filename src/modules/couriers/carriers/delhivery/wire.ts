/** Delhivery B2C "Track Shipment", `GET /api/v1/packages/json/`; naive IST times. */
import { Type as T, type Static } from "@sinclair/typebox";
import { Any, Opt, Text } from "../../adapters/wire/common.ts";

/** One `Scans[].ScanDetail`. */
export const DelhiveryScan = T.Object({
  ScanDateTime: Opt(Text),
  ScanType: Opt(Text),
  Scan: Opt(Text),
  StatusDateTime: Opt(Text),
  ScannedLocation: Opt(Text),
  StatusCode: Opt(Text),
  Instructions: Opt(Text),
});

/** The shipment-level `Status`. */
const DelhiveryStatus = T.Object({
  Status: Opt(Text),
  StatusType: Opt(Text),
  StatusCode: Opt(Text),
  StatusDateTime: Opt(Text),
  StatusLocation: Opt(Text),
  Instructions: Opt(Text),
  RecievedBy: Opt(Text),
});

const DelhiveryShipment = T.Object({
  AWB: Opt(Text),
  Origin: Opt(Text),
  Destination: Opt(Text),
  Consignee: Opt(
    T.Object({
      City: Opt(Text),
      Name: Opt(Text),
      Country: Opt(Text),
      PinCode: Opt(Text),
      State: Opt(Text),
      Address1: Opt(Any),
    }),
  ),
  Scans: Opt(T.Array(T.Object({ ScanDetail: Opt(DelhiveryScan) }))),
  Status: Opt(DelhiveryStatus),
  /** The EDD, naive IST (`2024-09-24T23:59:59`), null while only manifested. */
  ExpectedDeliveryDate: Opt(Text),
  /** The date promised at booking, same format. */
  PromisedDeliveryDate: Opt(Text),
});

/** The 200 answer: shipments, or the 200-wrapped error `{Error, rmk, Success: false}`. */
export const DelhiveryResponse = T.Object({
  ShipmentData: Opt(T.Array(T.Object({ Shipment: Opt(DelhiveryShipment) }))),
  Error: Opt(Text),
  rmk: Opt(Text),
  Success: Opt(T.Boolean()),
});

export type DelhiveryScan = Static<typeof DelhiveryScan>;
export type DelhiveryResponse = Static<typeof DelhiveryResponse>;

/** `POST /api/p/update` (NDR action, asynchronous): `{data: [{waybill, act, action_data?}]}`; README.md, "NDR actions". */
export const DelhiveryNdrRequest = T.Object({
  data: T.Array(
    T.Object({
      waybill: T.String(),
      act: T.Union([T.Literal("RE-ATTEMPT"), T.Literal("DEFER_DLV"), T.Literal("EDIT_DETAILS")]),
      action_data: Opt(
        T.Object({
          deferred_date: Opt(T.String()),
          name: Opt(T.String()),
          phone: Opt(T.String()),
          add: Opt(T.String()),
        }),
      ),
    }),
    { minItems: 1 },
  ),
});

/** Its answer: always a UPL id (the request is queued); an `error` instead when the body is refused outright. */
export const DelhiveryNdrAnswer = T.Object({
  request_id: Opt(Text),
  error: Opt(Any),
  success: Opt(T.Boolean()),
});

/** `GET /api/cmu/get_bulk_upl/<UPL id>?verbose=true`: the UPL's state and, once processed, one result per waybill. */
export const DelhiveryUplStatus = T.Object({
  status: Opt(Text),
  request_id: Opt(Text),
  result: Opt(
    T.Array(
      T.Object({
        waybill: Opt(Text),
        status: Opt(Text),
        remark: Opt(Text),
      }),
    ),
  ),
});

/** `POST /api/p/edit` with `cancellation: "true"` (Cancel Order API): a forward shipment turns into a return. */
export const DelhiveryCancelAnswer = T.Object({
  status: Opt(T.Union([T.Boolean(), T.String()])),
  waybill: Opt(Text),
  remark: Opt(Text),
  error: Opt(Any),
});

export type DelhiveryNdrRequest = Static<typeof DelhiveryNdrRequest>;
export type DelhiveryNdrAnswer = Static<typeof DelhiveryNdrAnswer>;
export type DelhiveryUplStatus = Static<typeof DelhiveryUplStatus>;
export type DelhiveryCancelAnswer = Static<typeof DelhiveryCancelAnswer>;
