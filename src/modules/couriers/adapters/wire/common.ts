/** Building blocks of the courier wire schemas, loose where couriers are loose. */
import { Type as T, type TSchema } from "@sinclair/typebox";

/** A leaf the adapter reads as text (`str()`): string, number or null. */
export const Text = T.Union([T.String(), T.Number(), T.Null()]);

export const Opt = <S extends TSchema>(s: S) => T.Optional(s);

export const OptNull = <S extends TSchema>(s: S) => T.Optional(T.Union([s, T.Null()]));

/** Any JSON value: a field the adapter never reads but a twin sends. */
export const Any = T.Unknown();

/** An XML leaf: text, or `{"#text"}` when the element also carries attributes. */
export const XmlText = T.Union([Text, T.Object({ "#text": Opt(Text) })]);

/** An XML element that may repeat: one occurrence parses as the item, several as an array. */
export const OneOrMany = <S extends TSchema>(s: S) => T.Union([s, T.Array(s)]);

/** An element that may also be empty (`<Scans></Scans>` parses as ""). */
export const OrEmpty = <S extends TSchema>(s: S) => T.Union([s, T.Literal("")]);
