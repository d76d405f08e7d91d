/** Ecom Express XML as fast-xml-parser reads it; no real sample exists (fixtures/SOURCE.md). */
import { Type as T, type Static } from "@sinclair/typebox";
import { OneOrMany, Opt, OrEmpty, Text, XmlText } from "../../adapters/wire/common.ts";

/** `<field type="CharField" name="status">Delivered</field>`; Django nulls arrive as "None". */
export const EcomField = T.Object({ "@type": Opt(XmlText), "@name": Opt(XmlText), "#text": Opt(Text) });

/** One scan: `<object model="scan_stages">` of fields (status, reason_code_number, location_city, updated_on…). */
export const EcomScan = T.Object({ "@pk": Opt(XmlText), "@model": Opt(XmlText), field: Opt(OneOrMany(EcomField)) });

/** A field of the AWB object; the `scans` field nests scan objects. */
export const EcomAwbField = T.Object({
  "@type": Opt(XmlText),
  "@name": Opt(XmlText),
  "#text": Opt(Text),
  object: Opt(OneOrMany(EcomScan)),
});

const EcomAwb = T.Object({ "@pk": Opt(XmlText), "@model": Opt(XmlText), field: Opt(OneOrMany(EcomAwbField)) });

/** The document; an unknown AWB is an `ecomexpress-objects` without objects. */
export const EcomDocument = T.Object({
  "ecomexpress-objects": OrEmpty(T.Object({ "@version": Opt(XmlText), object: Opt(OneOrMany(EcomAwb)) })),
});

export type EcomField = Static<typeof EcomField>;
export type EcomScan = Static<typeof EcomScan>;
export type EcomAwbField = Static<typeof EcomAwbField>;
export type EcomDocument = Static<typeof EcomDocument>;
