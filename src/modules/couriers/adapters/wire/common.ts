/**
 * Building blocks of the courier wire schemas. Each courier's response shape
 * is written once, in TypeBox, in `wire/<courier>.ts`: its adapter checks a
 * body against it before reading it (a body of another shape is a `backend`
 * error), and its sandbox twin builds its answers as `Static<>` of it.
 *
 * The schemas describe what the adapter relies on, loosely where couriers
 * are loose: every field is optional unless the adapter cannot work without
 * it, leaves accept a string or a number (couriers switch between them) or
 * null, and objects allow fields we do not read.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";

/** A leaf the adapter reads as text (`str()`): string, number or null. */
export const Text = T.Union([T.String(), T.Number(), T.Null()]);

/** An optional field. */
export const Opt = <S extends TSchema>(s: S) => T.Optional(s);

/** An optional field that may also be null. */
export const OptNull = <S extends TSchema>(s: S) => T.Optional(T.Union([s, T.Null()]));

/** Any JSON value: a field the adapter never reads but a twin sends. */
export const Any = T.Unknown();

/**
 * A leaf of a parsed XML document (fast-xml-parser): text, or `{"#text"}`
 * when the element also carries attributes. Read it with `str()`.
 */
export const XmlText = T.Union([Text, T.Object({ "#text": Opt(Text) })]);

/** An XML element that may repeat: one occurrence parses as the item, several as an array. */
export const OneOrMany = <S extends TSchema>(s: S) => T.Union([s, T.Array(s)]);

/** An element that may also be empty (`<Scans></Scans>` parses as ""). */
export const OrEmpty = <S extends TSchema>(s: S) => T.Union([s, T.Literal("")]);
