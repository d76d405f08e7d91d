/**
 * The Elysia behaviour src/http/elysia-quirks.ts works around, and the workaround. When the first test fails,
 * Elysia no longer reads hooks' source text to decide whether to await them
 * (https://github.com/elysiajs/elysia/issues/2005): write the hooks plainly and delete the quirks file. When the
 * second fails, a request hook's promise of nothing resumes the request: a hook that may wait can return its wait.
 */
import { describe, expect, test } from "bun:test";
import { Elysia, type AnyElysia } from "elysia";
import { requestHookThatMayWait, syncRequestHook } from "../../src/http/elysia-quirks.ts";

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

  test("a request hook's promise of nothing is the answer: the request does not resume (upstream behaviour)", async () => {
    const app = new Elysia()
      .onRequest(
        syncRequestHook(function waits({ request }) {
          if (request.url.endsWith("/wait")) return Promise.resolve(undefined) as unknown as Promise<Response>;
        }),
      )
      .get("/wait", () => "ok")
      .compile();
    expect(await app.fetch(req("/wait"))).toBeUndefined();
  });

  test("requestHookThatMayWait: no wait stays synchronous; after a wait the request passes again, without the first pass's headers", async () => {
    const waited = new Set<Request>();
    const passes: string[] = [];
    const app: AnyElysia = new Elysia()
      .onRequest(
        syncRequestHook(function door({ request, set }) {
          set.headers["x-pass"] = String(passes.push(request.url));
        }),
      )
      .onRequest(
        requestHookThatMayWait(
          (request) => {
            if (!request.url.endsWith("/slow") || waited.has(request)) return undefined;
            return Promise.resolve().then(() => void waited.add(request));
          },
          (request) => app.fetch(request),
        ),
      )
      .get("/fast", () => "fast")
      .get("/slow", () => "slow")
      .compile();
    const fast = app.fetch(req("/fast"));
    expect(fast).toBeInstanceOf(Response);
    expect(await (fast as Response).text()).toBe("fast");
    const slow = app.fetch(req("/slow"));
    expect(slow).toBeInstanceOf(Promise);
    const answer = await slow;
    expect(await answer.text()).toBe("slow");
    expect(answer.headers.get("x-pass")).toBe("3");
    expect(passes).toHaveLength(3);
  });
});
