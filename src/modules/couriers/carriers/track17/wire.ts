/** 17TRACK API v2.2 (api.17track.net/en/doc?version=v2.2): the `{code, data}` envelope and the shared `track_info`. */
import { Type as T, type Static } from "@sinclair/typebox";
import { Any, Opt, OptNull, Text } from "../../adapters/wire/common.ts";

export const Track17Address = T.Object({
  country: Opt(Text),
  state: Opt(Text),
  city: Opt(Text),
  street: Opt(Text),
  postal_code: Opt(Text),
  coordinates: Opt(T.Object({ longitude: Opt(Text), latitude: Opt(Text) })),
});

export const Track17Event = T.Object({
  time_iso: Opt(Text),
  time_utc: Opt(Text),
  description: Opt(Text),
  location: Opt(Text),
  stage: Opt(Text),
  sub_status: Opt(Text),
  address: OptNull(Track17Address),
});

const Track17Provider = T.Object({
  provider: Opt(Any),
  service_type: Opt(Text),
  latest_sync_status: Opt(Text),
  latest_sync_time: Opt(Text),
  events_hash: Opt(Text),
  events: Opt(T.Array(Track17Event)),
});

/** `time_metrics.estimated_delivery_date`: the EDD window (ISO 8601 with offset) and who estimated it (`Official` = the carrier). */
export const Track17Estimate = T.Object({ source: Opt(Text), from: Opt(Text), to: Opt(Text) });

export const Track17TrackInfo = T.Object({
  shipping_info: OptNull(
    T.Object({ shipper_address: OptNull(Track17Address), recipient_address: OptNull(Track17Address) }),
  ),
  latest_status: OptNull(T.Object({ status: Opt(Text), sub_status: Opt(Text), sub_status_descr: Opt(Text) })),
  latest_event: OptNull(Track17Event),
  time_metrics: OptNull(
    T.Object({
      days_after_order: Opt(Text),
      days_of_transit: Opt(Text),
      days_of_transit_done: Opt(Text),
      days_after_last_update: Opt(Text),
      estimated_delivery_date: OptNull(Track17Estimate),
    }),
  ),
  milestone: Opt(Any),
  misc_info: Opt(Any),
  tracking: OptNull(T.Object({ providers_hash: Opt(Text), providers: Opt(T.Array(Track17Provider)) })),
});

/** An accepted number; `track_info` only in `gettrackinfo` answers (null until 17TRACK has one). */
export const Track17Accepted = T.Object({
  number: Opt(Text),
  carrier: Opt(Text),
  origin: Opt(Text),
  param: Opt(Text),
  tag: Opt(Text),
  email: Opt(Text),
  lang: Opt(Text),
  track_info: OptNull(Track17TrackInfo),
});

const Track17Error = T.Object({ code: Opt(Text), message: Opt(Text) });

export const Track17Rejected = T.Object({ number: Opt(Text), tag: Opt(Text), error: Opt(Track17Error) });

/** The envelope `{code, data:{accepted[], rejected[]}}`; the webhook sends one accepted entry as `data` itself. */
export const Track17Envelope = T.Object({
  code: Opt(Text),
  event: Opt(Text),
  data: Opt(
    T.Object({
      accepted: Opt(T.Array(Track17Accepted)),
      rejected: Opt(T.Array(Track17Rejected)),
      errors: Opt(T.Array(Track17Error)),
      number: Opt(Text),
      carrier: Opt(Text),
      param: Opt(Text),
      tag: Opt(Text),
      track_info: OptNull(Track17TrackInfo),
    }),
  ),
});

export type Track17Event = Static<typeof Track17Event>;
export type Track17Address = Static<typeof Track17Address>;
export type Track17TrackInfo = Static<typeof Track17TrackInfo>;
export type Track17Estimate = Static<typeof Track17Estimate>;
export type Track17Accepted = Static<typeof Track17Accepted>;
export type Track17Rejected = Static<typeof Track17Rejected>;
export type Track17Envelope = Static<typeof Track17Envelope>;
