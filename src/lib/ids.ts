/** Prefixed, time-sortable ids: a kind prefix (`acc_`, `wh_`…) and a UUIDv7 in hex, so ids sort by creation. */
export type IdPrefix =
  | "acc"
  | "key"
  | "wh"
  | "evt"
  | "dlv"
  | "shp"
  | "att"
  | "ses"
  | "req"
  | "upg"
  | "lnk"
  | "inc"
  | "act";

export function newId(prefix: IdPrefix): string {
  // The UUID's 16 bytes as hex: the dashed text without its dashes, without building the dashed text.
  return `${prefix}_${(Bun.randomUUIDv7("buffer") as Buffer).toString("hex")}`;
}

/** True when `id` has the given prefix and the id body shape (used to 404 early on garbage ids). */
export function isId(prefix: IdPrefix, id: string): boolean {
  return (
    id.length === prefix.length + 33 &&
    id.startsWith(`${prefix}_`) &&
    /^[0-9a-f]{32}$/.test(id.slice(prefix.length + 1))
  );
}
