/** DHL Shipment Tracking – Unified, `GET /track/shipments` (DHL developer portal; fixtures in `fixtures/`). */
import { Type as T, type Static } from "@sinclair/typebox";
import { Any, Opt, Text } from "../../adapters/wire/common.ts";

const DhlPlace = T.Object({
  address: Opt(T.Object({ addressLocality: Opt(Text), countryCode: Opt(Text), postalCode: Opt(Text) })),
});

/** A shipment's `status` and each of its `events[]` share this shape. */
export const DhlEvent = T.Object({
  timestamp: Opt(Text),
  location: Opt(DhlPlace),
  statusCode: Opt(Text),
  status: Opt(Text),
  description: Opt(Text),
  remark: Opt(Text),
  nextSteps: Opt(Text),
});

const DhlShipment = T.Object({
  id: Opt(Text),
  service: Opt(Text),
  origin: Opt(DhlPlace),
  destination: Opt(DhlPlace),
  status: Opt(DhlEvent),
  /** The EDD, ISO 8601 (`2018-08-03T00:00:00Z`), and its window. */
  estimatedTimeOfDelivery: Opt(Text),
  estimatedDeliveryTimeFrame: Opt(T.Object({ estimatedFrom: Opt(Text), estimatedThrough: Opt(Text) })),
  estimatedTimeOfDeliveryRemark: Opt(Text),
  details: Opt(
    T.Object({
      carrier: Opt(Any),
      product: Opt(Any),
      proofOfDelivery: Opt(T.Object({ timestamp: Opt(Text), documentUrl: Opt(Text), signed: Opt(Any) })),
      totalNumberOfPieces: Opt(Text),
      pieceIds: Opt(T.Array(Text)),
    }),
  ),
  events: Opt(T.Array(DhlEvent)),
});

/** The 200 answer. */
export const DhlTrackResponse = T.Object({ url: Opt(Text), shipments: T.Array(DhlShipment) });

/** RFC 7807 problem body: 404 "No result found", 401 from the gateway. */
export const DhlProblem = T.Object({ title: Opt(Text), detail: Opt(Text), status: Opt(Text), instance: Opt(Text) });

export type DhlEvent = Static<typeof DhlEvent>;
export type DhlTrackResponse = Static<typeof DhlTrackResponse>;
export type DhlProblem = Static<typeof DhlProblem>;
