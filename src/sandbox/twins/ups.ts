/** ups twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const upsTwin: Twin = {
  id: "ups",
  handle: () => new Response("not implemented", { status: 501 }),
};
