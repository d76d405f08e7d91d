/**
 * The server (src/http/server.ts): Bun serves the composed `fetch`, `handle()` calls the same one, and routes
 * read the client's socket address from the peer the server fills on `listen()` (loopback only).
 */
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { ApiServer, SocketPeer } from "../../src/http/server.ts";

describe("ApiServer", () => {
  test("listen() and handle() go through the composed fetch; the socket address is known only over a socket", async () => {
    const peer = new SocketPeer();
    const router = new Elysia().get("/", ({ request }) => peer.addressOf(request) ?? "none").compile();
    let seen = 0;
    const server = new ApiServer(router, (request) => (seen++, router.fetch(request)), peer);
    expect(await (await server.handle(new Request("http://localhost/"))).text()).toBe("none");
    server.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const res = await fetch(`http://127.0.0.1:${server.server!.port}/`);
      expect(await res.text()).toBe("127.0.0.1");
    } finally {
      await server.stop(true);
    }
    expect(seen).toBe(2);
    expect(server.server).toBeNull();
    expect(await (await server.handle(new Request("http://localhost/"))).text()).toBe("none");
  });
});
