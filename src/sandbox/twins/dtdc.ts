/** dtdc twin: not implemented yet (stub). */
import type { Twin } from "../server.ts";

export const dtdcTwin: Twin = {
  id: "dtdc",
  handle: () => new Response("not implemented", { status: 501 }),
};
