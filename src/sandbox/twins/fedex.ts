/** fedex twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const fedexTwin: Twin = {
  id: "fedex",
  handle: () => new Response("not implemented", { status: 501 }),
};
