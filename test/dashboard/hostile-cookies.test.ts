/**
 * The dashboard's cookies (docs/dashboard.md "Sessions", "CSRF", "Hostile
 * input"): the exact attributes it sets, and what malformed, hostile or
 * oversize `Cookie` headers get. Cookies go through Elysia's cookie handling;
 * a value Elysia decodes into a non-string (`{…}` and `[…]` are parsed as
 * JSON), broken percent-encoding, a huge value, thousands of pairs or
 * prototype names read as "no cookie": an HTML page or a redirect to sign-in,
 * never a 5xx. Over a real socket, a header past Bun's 16 KiB limit is
 * refused by Bun (431) before the app runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, csrfOf } from "./support.ts";

let ctx: TestContext;
let session: string; // "ct_session=…" of a signed-in account
let csrf: string; // that session's form token

beforeAll(async () => {
  ctx = await testContext();
  const c = new Client(ctx.app);
  await c.signUp(`cookies-${Bun.randomUUIDv7().slice(-6)}@example.com`);
  session = `ct_session=${c.jar.get("ct_session")}`;
  csrf = await c.csrf();
});
afterAll(() => ctx.close());

const send = (path: string, cookie: string, body?: string) =>
  ctx.app.handle(
    new Request(`http://localhost${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body,
    }),
  );

/** A `Set-Cookie` value as `[name, value, sorted lower-case attributes]`. */
function parts(setCookie: string): [string, string, string[]] {
  const [pair, ...attrs] = setCookie.split(/;\s*/);
  const i = pair!.indexOf("=");
  return [pair!.slice(0, i), pair!.slice(i + 1), attrs.map((a) => a.toLowerCase()).sort()];
}

const ATTRS = ["httponly", "path=/dashboard", "samesite=lax", "secure"];
const withAttrs = (...more: string[]) => [...ATTRS, ...more].sort();

describe("the cookies the dashboard sets", () => {
  test("ct_csrf is a browser-session cookie; ct_session lasts 12 hours; sign-out deletes it with the same attributes", async () => {
    const form = await send("/dashboard/sign-up", "");
    const csrfCookies = form.headers.getSetCookie();
    expect(csrfCookies).toHaveLength(1);
    const [name, token, attrs] = parts(csrfCookies[0]!);
    expect(name).toBe("ct_csrf");
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(attrs).toEqual(withAttrs());
    expect(csrfOf(await form.text())).toBe(token);

    const email = `set-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    const signUp = await send(
      "/dashboard/sign-up",
      `ct_csrf=${token}`,
      `_csrf=${token}&email=${encodeURIComponent(email)}&password=correct+horse+battery`,
    );
    expect(signUp.status).toBe(201);
    // The welcome page keeps the form token: only the session cookie is set.
    const sessionCookies = signUp.headers.getSetCookie();
    expect(sessionCookies).toHaveLength(1);
    const [sname, stoken, sattrs] = parts(sessionCookies[0]!);
    expect(sname).toBe("ct_session");
    expect(stoken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sattrs).toEqual(withAttrs("max-age=43200"));

    const page = await send("/dashboard", `ct_session=${stoken}`);
    expect(page.status).toBe(200);
    const out = await send("/dashboard/sign-out", `ct_session=${stoken}`, `_csrf=${csrfOf(await page.text())}`);
    expect(out.status).toBe(303);
    const gone = out.headers.getSetCookie();
    expect(gone).toHaveLength(1);
    expect(parts(gone[0]!)).toEqual(["ct_session", "", withAttrs("max-age=0")]);
  });

  test("a page that needs a session sets no cookie when it redirects to sign-in", async () => {
    const res = await send("/dashboard/keys", "ct_session=unknown");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in?next=%2Fdashboard%2Fkeys");
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});

/** Cookie headers a client may send; none names a live session. */
const HOSTILE: [string, string][] = [
  ["a JSON object as the session", `ct_session={"a":1}`],
  ["a JSON array as the session", "ct_session=[1,2]"],
  ["a percent-encoded JSON array", "ct_session=%5B1%5D"],
  ["JSON objects in both cookies", `ct_csrf={"x":1}; ct_session={}`],
  ["broken percent-encoding", "ct_session=%E0%A4%A; ct_csrf=%ZZ"],
  ["an encoded NUL", "ct_session=%00"],
  ["a quoted value", 'ct_session="quoted"'],
  ["a 1 MiB value", `ct_session=${"x".repeat(1 << 20)}`],
  ["20,000 cookies", Array.from({ length: 20_000 }, (_, i) => `c${i}=v`).join("; ")],
  ["prototype names", "__proto__=x; constructor=1; prototype={}"],
  ["no names or values", "=;;=; ;;"],
  ["a name without a value", "ct_session"],
  ["an empty session cookie", "ct_session="],
  ["latin-1 bytes", "\u00ff\u00fe=1; ct_session=\u00e9"],
];

describe("hostile Cookie headers", () => {
  test.each(HOSTILE)("%s: HTML pages and redirects to sign-in, never a 5xx", async (_, cookie) => {
    const home = await send("/dashboard", cookie);
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe("/dashboard/sign-in");

    const signIn = await send("/dashboard/sign-in", cookie);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get("content-type")).toStartWith("text/html");
    // None of these is a token the dashboard issued: a fresh one is set and put in the form.
    const [name, token] = parts(signIn.headers.getSetCookie()[0] ?? "=");
    expect(name).toBe("ct_csrf");
    expect(csrfOf(await signIn.text())).toBe(token);

    const post = await send("/dashboard/sign-in", cookie, "_csrf=x&email=a%40example.com&password=zzzzzzzzzzzz");
    expect(post.status).toBe(403);
    expect(post.headers.get("content-type")).toStartWith("text/html");

    const keys = await send("/dashboard/keys", cookie, "_csrf=x&name=k");
    expect(keys.status).toBe(303);
    expect(keys.headers.get("location")).toBe("/dashboard/sign-in");

    const out = await send("/dashboard/sign-out", cookie, "_csrf=x");
    expect(out.status).toBe(303);

    const link = await send("/dashboard/password-link/abc", cookie);
    expect(link.status).toBe(404);
    expect(link.headers.get("content-type")).toStartWith("text/html");
  });

  test("the double submit needs a token the dashboard issued: an empty or made-up ct_csrf echoed in _csrf is refused", async () => {
    for (const value of ["", "abc", "%7B%7D"]) {
      const res = await send(
        "/dashboard/sign-in",
        `ct_csrf=${value}`,
        `_csrf=${value}&email=a%40example.com&password=zzzzzzzzzzzz`,
      );
      expect(res.status).toBe(403);
    }
    // A JSON-looking cookie is an object once parsed: it never equals the form's text.
    const res = await send(
      "/dashboard/sign-up",
      `ct_csrf={"a":1}`,
      `_csrf=${encodeURIComponent('{"a":1}')}&email=json%40example.com&password=correct+horse+battery`,
    );
    expect(res.status).toBe(403);
  });

  test("garbage beside a live session does not disturb it; with a name twice the first one counts", async () => {
    const res = await send("/dashboard/keys", `junk={"a":1}; bad=%E0%A4%A; ${session}; ct_session=bogus; __proto__=x`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(csrf);
    const other = await send("/dashboard/keys", `ct_session=bogus; ${session}`);
    expect(other.status).toBe(303);
  });
});

describe("over a real socket", () => {
  test("a Cookie header up to Bun's 16 KiB header limit reaches the dashboard; past it Bun answers 431 itself", async () => {
    ctx.app.listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: 1024 * 1024, development: false });
    const base = `http://127.0.0.1:${ctx.app.server!.port}`;
    try {
      const near = await fetch(`${base}/dashboard/sign-in`, {
        headers: { cookie: `ct_session=${"x".repeat(15_000)}` },
      });
      expect(near.status).toBe(200);
      expect(near.headers.get("content-type")).toStartWith("text/html");
      await near.text();
      for (const n of [17_000, 1 << 20]) {
        const res = await fetch(`${base}/dashboard/sign-in`, { headers: { cookie: `ct_session=${"x".repeat(n)}` } });
        expect(res.status).toBe(431);
        await res.text();
      }
    } finally {
      await ctx.app.stop(true);
    }
  });
});
