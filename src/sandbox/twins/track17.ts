/** track17 twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const track17Twin: Twin = {
  id: "track17",
  handle: () => new Response("not implemented", { status: 501 }),
};
