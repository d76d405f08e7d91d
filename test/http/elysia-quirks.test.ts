/**
 * The Elysia behaviour src/http/elysia-quirks.ts works around, and the workaround. When the first test fails,
 * Elysia no longer reads hooks' source text to decide whether to await them
 * (https://github.com/elysiajs/elysia/issues/2005): write the hooks plainly and delete the quirks file.
 */
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { syncRequestHook } from "../../src/http/elysia-quirks.ts";

const nothing = (_request: Request): Response | undefined => undefined;
const answer = (request: Request): Response | undefined =>
  request.url.endsWith("/early") ? new Response("early") : undefined;
const req = (path: string) => new Request(`http://localhost${path}`);

describe("Elysia reads a hook's source text", () => {
  test("a synchronous onRequest hook written `return f(…)` makes every request's answer a promise (upstream behaviour)", () => {
    const app = new Elysia()
      .onRequest(function plain({ request }) {
        return nothing(request);
      })
      .get("/", () => "ok")
      .compile();
    expect(app.fetch(req("/"))).toBeInstanceOf(Promise);
  });

  test("the same hook through syncRequestHook: answers stay synchronous, early answers and promises still count", async () => {
    const app = new Elysia()
      .onRequest(
        syncRequestHook(function wrapped({ request }) {
          return answer(request);
        }),
      )
      .onRequest(
        syncRequestHook(function later({ request }) {
          if (request.url.endsWith("/later")) return Promise.resolve(new Response("later"));
        }),
      )
      .get("/", () => "ok")
      .compile();
    const plain = app.fetch(req("/"));
    expect(plain).toBeInstanceOf(Response);
    expect(await (plain as Response).text()).toBe("ok");
    const early = app.fetch(req("/early"));
    expect(early).toBeInstanceOf(Response);
    expect(await (early as Response).text()).toBe("early");
    const later = app.fetch(req("/later"));
    expect(later).toBeInstanceOf(Promise);
    expect(await (await later).text()).toBe("later");
  });

  test("a hook through syncRequestHook keeps working inside a plugin the app uses", () => {
    const plugin = new Elysia({ name: "door" }).onRequest(syncRequestHook(({ request }) => answer(request)));
    const app = new Elysia()
      .use(plugin)
      .get("/", () => "ok")
      .compile();
    expect(app.fetch(req("/"))).toBeInstanceOf(Response);
    expect(app.fetch(req("/early"))).toBeInstanceOf(Response);
  });
});
