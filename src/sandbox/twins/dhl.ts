/** dhl twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const dhlTwin: Twin = {
  id: "dhl",
  handle: () => new Response("not implemented", { status: 501 }),
};
