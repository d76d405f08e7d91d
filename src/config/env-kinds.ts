/** Builders of config-env.ts's variables: each adds the docs' and errors' annotations TypeBox carries. */
import { Type as T, type TLiteral, type TUnion } from "@sinclair/typebox";

/**
 * `x-default`: a default config.ts computes, or what unset means; `x-expected`: the text's form in an operator's
 * words, quoted by errors instead of the value (values may be secrets); `x-pattern`: a list's text.
 */
export type Doc = { description: string; default?: unknown; "x-default"?: string };
export const Int = (o: Doc & { minimum?: number; maximum?: number }) => T.Integer(o);
export const Text = (o: Doc & { pattern?: string; minLength?: number; "x-expected"?: string }) => T.String(o);
export const OneOf = <const V extends string[]>(values: V, o: Doc) =>
  T.Union(
    values.map((v) => T.Literal(v)),
    o,
  ) as TUnion<TLiteral<V[number]>[]>;
export const File = (description: string) => T.Optional(Text({ minLength: 1, description }));
export const Port = (o: Doc) => Int({ maximum: 65_535, ...o });
export const SecretsKey = (o: Doc) => {
  const expected = "32 bytes in base64 or base64url (43 to 88 characters of A-Z a-z 0-9 + / = _ -)";
  return T.Optional(Text({ pattern: "^[A-Za-z0-9+/=_-]{43,88}$", "x-expected": expected, ...o }));
};
