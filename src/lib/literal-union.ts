/** A TypeBox union of string literals that Elysia's route types read as the values' union (not `never`). */
import { Type as T, type SchemaOptions, type TLiteral, type TUnion } from "@sinclair/typebox";

/** `T.Union` of `T.Literal(v)` for each of `values`, in order; its static type is `V`. */
export function literalUnion<V extends string>(values: readonly V[], options?: SchemaOptions): TUnion<[TLiteral<V>]> {
  // One value makes T.Union return the literal itself; its static type is the same.
  return T.Union(values.map((v) => T.Literal(v)) as [TLiteral<V>], options) as unknown as TUnion<[TLiteral<V>]>;
}
