/**
 * The courier XML reader (src/modules/couriers/adapters/kit.ts parseXml), shared by Aramex, Blue Dart and Ecom
 * Express: XML's escapes are decoded as any XML reader decodes them; declarations that could expand entities are refused.
 */
import { expect, test } from "bun:test";
import { parseXml } from "../../src/modules/couriers/adapters/kit.ts";

test("the five predefined entities and numeric character references are decoded, in text and attributes", () => {
  const doc = parseXml(
    `<Scan City="M&amp;S &#x26; Co"><Remark>Left at &quot;gate&quot; &lt;B&gt; &apos;2&apos; &#38; &#x20B9;5</Remark></Scan>`,
  ) as {
    Scan: { "@City": string; Remark: string };
  };
  expect(doc.Scan["@City"]).toBe("M&S & Co");
  expect(doc.Scan.Remark).toBe(`Left at "gate" <B> '2' & ₹5`);
});

test("a DOCTYPE (the only way to declare an entity) is still refused before parsing", () => {
  expect(() => parseXml(`<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>`)).toThrow(/DOCTYPE/);
});
