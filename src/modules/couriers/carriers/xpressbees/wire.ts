/** Xpressbees `POST /api/users/login` and `GET /api/shipments2/track/{awb}` (shapes from public parser code; fixtures/SOURCE.md). */
import { Type as T, type Static } from "@sinclair/typebox";
import { Opt, Text } from "../../adapters/wire/common.ts";

/** `{status: true, data: "<token>"}`, or `{status: false, message}` for refused credentials. */
export const XpressbeesLoginResponse = T.Object({ status: T.Boolean(), data: Opt(Text), message: Opt(Text) });

/** One `data.history[]` event; `event_time` is `YYYY-MM-DD HH:MM`, naive IST. */
export const XpressbeesEvent = T.Object({
  status_code: Opt(Text),
  location: Opt(Text),
  event_time: Opt(Text),
  message: Opt(Text),
});

/** `{status: true, data: {…, history[]}}`, or `{status: false, message}` ("No data found", token refused). */
export const XpressbeesTrackResponse = T.Object({
  status: T.Boolean(),
  message: Opt(Text),
  data: Opt(
    T.Object({
      awb_number: Opt(Text),
      status: Opt(Text),
      origin: Opt(Text),
      destination: Opt(Text),
      history: Opt(T.Array(XpressbeesEvent)),
    }),
  ),
});

export type XpressbeesEvent = Static<typeof XpressbeesEvent>;
export type XpressbeesLoginResponse = Static<typeof XpressbeesLoginResponse>;
export type XpressbeesTrackResponse = Static<typeof XpressbeesTrackResponse>;
