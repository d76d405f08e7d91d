/** xpressbees twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const xpressbeesTwin: Twin = {
  id: "xpressbees",
  handle: () => new Response("not implemented", { status: 501 }),
};
