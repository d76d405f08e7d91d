/** bluedart twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const bluedartTwin: Twin = {
  id: "bluedart",
  handle: () => new Response("not implemented", { status: 501 }),
};
