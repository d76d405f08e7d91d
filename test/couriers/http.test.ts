import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { CourierError } from "../../src/modules/couriers/adapters/types.ts";
import { createCourierHttp, expiringSignal, MAX_COURIER_BODY } from "../../src/modules/couriers/http.ts";

// A deliberately badly behaved "courier" on loopback: every failure a real backend can show.
let server: ReturnType<typeof Bun.serve>;
let rawPort = 0;
const raw = createServer((sock: Socket) => sock.destroy()); // accepts, then resets
beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/redirect")
        return new Response(null, { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } });
      if (path === "/html")
        return new Response("<html>502</html>", { status: 502, headers: { "content-type": "text/html" } });
      if (path === "/huge") return new Response(new Uint8Array(MAX_COURIER_BODY + 10));
      // A few KiB on the wire (its Content-Length), past the cap once inflated.
      if (path === "/gzip-bomb")
        return new Response(Bun.gzipSync(new Uint8Array(MAX_COURIER_BODY + 10)), {
          headers: { "content-encoding": "gzip" },
        });
      if (path === "/drip")
        return new Response(
          new ReadableStream({
            async pull(c) {
              await Bun.sleep(200);
              c.enqueue(new TextEncoder().encode("{"));
            },
          }),
        );
      if (path === "/hang") {
        await Bun.sleep(5_000);
        return new Response("late");
      }
      return Response.json({ ok: true });
    },
  });
  await new Promise<void>((r) => raw.listen(0, "127.0.0.1", () => r()));
  rawPort = (raw.address() as { port: number }).port;
});
afterAll(async () => {
  await server.stop(true);
  raw.close();
});

async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    expect(e).toBeInstanceOf(CourierError);
    return (e as CourierError).kind;
  }
}

describe("courier HTTP client against hostile backends", () => {
  const http = () => createCourierHttp({ baseUrl: `http://127.0.0.1:${server.port}`, timeoutMs: 800, connections: 4 });

  test("a 3xx is returned as a status, never followed", async () => {
    const res = await http().request({ path: "/redirect" });
    expect(res.status).toBe(302);
  });

  test("an HTML 5xx page is returned as text for the adapter to classify", async () => {
    const res = await http().request({ path: "/html" });
    expect([res.status, res.text]).toEqual([502, "<html>502</html>"]);
  });

  test("a body larger than the cap is a backend error (never buffered whole)", async () => {
    expect(await kindOf(http().request({ path: "/huge" }))).toBe("backend");
  });

  test("a compressed body is capped by its inflated size, not by its Content-Length", async () => {
    expect(await kindOf(http().request({ path: "/gzip-bomb" }))).toBe("backend");
  });

  test("slow drip and a hanging backend are timeouts", async () => {
    expect(await kindOf(http().request({ path: "/drip" }))).toBe("timeout");
    expect(await kindOf(http().request({ path: "/hang" }))).toBe("timeout");
  });

  test("connection reset and refused connections are backend errors", async () => {
    const reset = createCourierHttp({ baseUrl: `http://127.0.0.1:${rawPort}`, timeoutMs: 800, connections: 1 });
    expect(await kindOf(reset.request({ path: "/" }))).toBe("backend");
    const refused = createCourierHttp({ baseUrl: "http://127.0.0.1:1", timeoutMs: 800, connections: 1 });
    expect(await kindOf(refused.request({ path: "/" }))).toBe("backend");
  });

  test("a TLS failure (https to a plain-HTTP port) is a backend error", async () => {
    const tls = createCourierHttp({ baseUrl: `https://127.0.0.1:${server.port}`, timeoutMs: 800, connections: 1 });
    expect(await kindOf(tls.request({ path: "/" }))).toBe("backend");
  });
});

describe("expiringSignal (the courier call's timeout)", () => {
  test("aborts with a TimeoutError once its time is up", async () => {
    const { signal } = expiringSignal(20);
    expect(signal.aborted).toBe(false);
    await new Promise((aborted) => signal.addEventListener("abort", aborted, { once: true }));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe("TimeoutError");
  });

  test("clear() drops the timer: the signal never aborts after the call ended", async () => {
    const { signal, clear } = expiringSignal(20);
    // Armed after it with the same time: once this one aborts, the cleared one's timer would have fired.
    const control = expiringSignal(20);
    clear();
    await new Promise((aborted) => control.signal.addEventListener("abort", aborted, { once: true }));
    expect(signal.aborted).toBe(false);
  });
});
