/**
 * The JSON body parser is scoped to the modules that use it (`jsonBodies()`, src/http/body.ts): their routes read
 * the body as JSON whatever the Content-Type, within the body limits; a sibling module, or the app around them,
 * keeps Elysia's own parsing by Content-Type.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { jsonBodies, MAX_JSON_DEPTH } from "../../src/http/body.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { webhookEnv } from "../webhooks/receiver.ts";

describe("jsonBodies()", () => {
  const echo = ({ body }: { body: unknown }) => ({ body: body ?? null });
  const app = new Elysia()
    .use(new Elysia({ prefix: "/json" }).use(jsonBodies()).post("/echo", echo))
    .use(new Elysia({ prefix: "/other" }).post("/echo", echo))
    .post("/outer", echo);
  const post = async (path: string, type: string, body: string) => {
    const res = await app.handle(
      new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": type }, body }),
    );
    return [res.status, res.status === 200 ? ((await res.json()) as { body: unknown }).body : null] as const;
  };

  test("the module that uses it reads JSON whatever the Content-Type", async () => {
    expect(await post("/json/echo", "text/plain", '{"a":1}')).toEqual([200, { a: 1 }]);
    expect(await post("/json/echo", "application/x-www-form-urlencoded", '{"a":1}')).toEqual([200, { a: 1 }]);
  });

  test("and refuses what is not acceptable JSON there (form encoding, nesting too deep)", async () => {
    expect((await post("/json/echo", "application/x-www-form-urlencoded", "a=1"))[0]).not.toBe(200);
    expect(
      (
        await post("/json/echo", "application/json", "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))
      )[0],
    ).not.toBe(200);
  });

  test("a sibling module and the app around them parse by Content-Type as Elysia does", async () => {
    expect(await post("/other/echo", "application/x-www-form-urlencoded", "a=1")).toEqual([200, { a: "1" }]);
    expect(await post("/other/echo", "text/plain", '{"a":1}')).toEqual([200, '{"a":1}']);
    expect(await post("/outer", "application/x-www-form-urlencoded", "a=1")).toEqual([200, { a: "1" }]);
  });
});

describe("in the app", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await testContext(await webhookEnv());
  });
  afterAll(async () => {
    await ctx?.close();
  });

  test("POST /v1/shipments and /v1/webhooks read a JSON body sent as text/plain or form encoding", async () => {
    const a = await ctx.account("free");
    const [shipments] = await ctx.call("/v1/shipments", {
      method: "POST",
      key: a.key,
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ shipments: [{ courier: "delhivery", tracking_number: "1234567890121" }] }),
    });
    expect(shipments.status).toBe(202);
    const [hook] = await ctx.call("/v1/webhooks", {
      method: "POST",
      key: a.key,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ url: "https://example.com/h", events: ["tracking.delivered"], mode: "test" }),
    });
    expect(hook.status).toBe(201);
  });
});
