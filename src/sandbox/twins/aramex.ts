/** aramex twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const aramexTwin: Twin = {
  id: "aramex",
  handle: () => new Response("not implemented", { status: 501 }),
};
