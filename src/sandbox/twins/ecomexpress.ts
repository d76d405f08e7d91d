/** ecomexpress twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const ecomexpressTwin: Twin = {
  id: "ecomexpress",
  handle: () => new Response("not implemented", { status: 501 }),
};
