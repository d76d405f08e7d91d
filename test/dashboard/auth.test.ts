/** Dashboard sign-up, sign-in, sessions, CSRF, throttling and security headers (docs/dashboard.md). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, sessions } from "../../src/db/schema/index.ts";
import { SESSION_TTL_MS } from "../../src/modules/dashboard/session.ts";
import { SIGNIN_MAX_FAILURES, SIGNIN_MAX_FAILURES_PER_IP } from "../../src/modules/accounts/signin-throttle.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, csrfOf, inlineScripts } from "./support.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

let n = 0;
const email = () => `dash${++n}-${Bun.randomUUIDv7().slice(-6)}@example.com`;

describe("sign-up", () => {
  test("creates a free account, signs in with a hardened cookie and shows the first key once; the key works", async () => {
    const c = new Client(ctx.app);
    const [page] = await c.get("/dashboard/sign-up");
    expect(page.status).toBe(200);
    const pre = page.headers.getSetCookie().find((x) => x.startsWith("ct_csrf="))!;
    expect(pre).toContain("HttpOnly");
    const e = email();
    const csrf = csrfOf(
      await (
        await ctx.app.handle(
          new Request("http://localhost/dashboard/sign-up", { headers: { cookie: `ct_csrf=${c.jar.get("ct_csrf")}` } }),
        )
      ).text(),
    );
    const [res, html] = await c.post("/dashboard/sign-up", {
      _csrf: csrf,
      email: e.toUpperCase(),
      password: "correct horse battery",
    });
    expect(res.status).toBe(201);
    const cookie = res.headers.getSetCookie().find((x) => x.startsWith("ct_session="))!;
    for (const attr of ["HttpOnly", "Secure", "SameSite=Lax", "Path=/dashboard", "Max-Age="])
      expect(cookie).toContain(attr);
    const key = /value="(ctk_[A-Za-z0-9_-]{43})"/.exec(html)![1]!;
    expect(html).toContain("shown only once");
    expect(html).toContain('data-copy="new-key"');

    const [acc] = await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, e));
    expect(acc!.plan).toBe("free");
    expect(acc!.passwordHash).toStartWith("$argon2id$");
    // Only the SHA-256 of the cookie token is stored.
    const token = c.jar.get("ct_session")!;
    const rows = await ctx.tdb.db.select().from(sessions).where(eq(sessions.accountId, acc!.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(new Bun.CryptoHasher("sha256").update(token).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(token);

    const [api] = await ctx.call("/v1/couriers", { key });
    expect(api.status).toBe(200);
    // The key page afterwards lists the prefix but never the key again.
    const [, keys] = await c.get("/dashboard/keys");
    expect(keys).toContain(key.slice(0, 10));
    expect(keys).not.toContain(key);
  });

  test("CSRF token missing, wrong, or a cross-site post: refused, no account", async () => {
    for (const [fields, headers] of [
      [{}, {}],
      [{ _csrf: "x".repeat(43) }, {}],
      [{ _csrf: "CSRF" }, { "sec-fetch-site": "cross-site" }],
    ] as [Record<string, string>, Record<string, string>][]) {
      const c = new Client(ctx.app);
      const token = await c.csrf("/dashboard/sign-up");
      const e = email();
      const [res, html] = await c.post(
        "/dashboard/sign-up",
        {
          email: e,
          password: "correct horse battery",
          ...fields,
          ...(fields._csrf === "CSRF" ? { _csrf: token } : {}),
        },
        headers,
      );
      expect(res.status).toBe(403);
      expect(html).toContain("Form expired");
      expect(await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, e))).toHaveLength(0);
    }
  });

  test("server-side validation with field messages", async () => {
    const c = new Client(ctx.app);
    const csrf = await c.csrf("/dashboard/sign-up");
    const [res, html] = await c.post("/dashboard/sign-up", { _csrf: csrf, email: "not-an-email", password: "short" });
    expect(res.status).toBe(422);
    expect(html).toContain("Enter a valid email address.");
    expect(html).toContain("Use 10 to 128 characters.");
    expect(html).toContain('aria-invalid="true"');
  });

  test("an email in use with another password gets a generic refusal", async () => {
    const e = email();
    await new Client(ctx.app).signUp(e);
    const c = new Client(ctx.app);
    const csrf = await c.csrf("/dashboard/sign-up");
    const [res, html] = await c.post("/dashboard/sign-up", { _csrf: csrf, email: e, password: "another password!" });
    expect(res.status).toBe(422);
    expect(html).toContain("We could not create an account with these details");
    expect(c.jar.has("ct_session")).toBe(false);
  });

  test("an XSS payload as the email is rendered inert", async () => {
    const c = new Client(ctx.app);
    const e = `<script>alert(1)</script>"'x${++n}@example.com`;
    await c.signUp(e);
    const [, html] = await c.get("/dashboard");
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;x");
    expect(inlineScripts(html)).toBe(0);
  });
});

describe("sign-in and sessions", () => {
  test("wrong password and unknown email answer the same generic page", async () => {
    const e = email();
    await new Client(ctx.app).signUp(e);
    const answers: [number, string][] = [];
    for (const who of [e, email()]) {
      const c = new Client(ctx.app);
      const csrf = await c.csrf("/dashboard/sign-in");
      const [res, html] = await c.post("/dashboard/sign-in", { _csrf: csrf, email: who, password: "wrong password!" });
      answers.push([res.status, html.replace(/value="[^"]*"/g, "")]);
    }
    expect(answers[0]![0]).toBe(401);
    expect(answers[0]).toEqual(answers[1]!);
    expect(answers[0]![1]).toContain("The email or password is incorrect.");
  }, 30_000); // several argon2id checks: slow on a loaded machine

  test("sign-in rotates the session; the old cookie stops working; next= is kept on the site only", async () => {
    const e = email();
    const c = new Client(ctx.app);
    await c.signUp(e);
    const before = c.jar.get("ct_session")!;
    expect((await c.get("/dashboard/sign-in"))[0].status).toBe(302); // already signed in
    const csrf = c.jar.get("ct_csrf")!; // double submit: the form token is the cookie's value
    const [res] = await c.post("/dashboard/sign-in", {
      _csrf: csrf,
      email: e,
      password: "correct horse battery",
      next: "/dashboard/webhooks",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/webhooks");
    expect(c.jar.get("ct_session")).not.toBe(before);
    const old = new Client(ctx.app);
    old.jar.set("ct_session", before);
    expect((await old.get("/dashboard"))[0].status).toBe(303);
    expect((await c.get("/dashboard"))[0].status).toBe(200);

    const d = new Client(ctx.app);
    const t = await d.csrf("/dashboard/sign-in");
    for (const next of ["https://evil.example/", "//evil.example", "/dashboard/../v1", "/dashboard\\evil"]) {
      d.jar.delete("ct_session");
      const [r] = await d.post("/dashboard/sign-in", { _csrf: t, email: e, password: "correct horse battery", next });
      expect(r.headers.get("location")).toBe("/dashboard");
    }
  }, 30_000); // several argon2id checks: slow on a loaded machine

  test("a session expires after its lifetime (service clock)", async () => {
    const c = new Client(ctx.app);
    await c.signUp(email());
    expect((await c.get("/dashboard/keys"))[0].status).toBe(200);
    ctx.clock.advance(SESSION_TTL_MS - 1000);
    expect((await c.get("/dashboard/keys"))[0].status).toBe(200);
    ctx.clock.advance(2000);
    const [res] = await c.get("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in?next=%2Fdashboard%2Fkeys");
  });

  test("sign-out needs the CSRF token, then ends the session", async () => {
    const c = new Client(ctx.app);
    await c.signUp(email());
    const token = c.jar.get("ct_session")!;
    expect((await c.post("/dashboard/sign-out", {}))[0].status).toBe(403);
    const csrf = await c.csrf();
    const [res] = await c.post("/dashboard/sign-out", { _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie().join()).toContain("Max-Age=0");
    const again = new Client(ctx.app);
    again.jar.set("ct_session", token);
    expect((await again.get("/dashboard"))[0].status).toBe(303);
  });

  test("unauthenticated pages redirect to sign-in; a POST without a session changes nothing", async () => {
    const c = new Client(ctx.app);
    for (const p of [
      "/dashboard",
      "/dashboard/keys",
      "/dashboard/billing",
      "/dashboard/webhooks",
      "/dashboard/shipments",
    ]) {
      const [res] = await c.get(p);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toStartWith("/dashboard/sign-in");
    }
    expect((await c.post("/dashboard/keys", { _csrf: "x" }))[0].status).toBe(303);
  });
});

describe("throttling", () => {
  test(`per address and account: after ${SIGNIN_MAX_FAILURES} failures from one address even the right password is refused there until the window ends`, async () => {
    const e = email();
    await new Client(ctx.app).signUp(e);
    const c = new Client(ctx.app);
    const csrf = await c.csrf("/dashboard/sign-in");
    for (let i = 0; i < SIGNIN_MAX_FAILURES; i++)
      expect(
        (await c.post("/dashboard/sign-in", { _csrf: csrf, email: e, password: `wrong-${i}-password` }))[0].status,
      ).toBe(401);
    const [res, html] = await c.post("/dashboard/sign-in", {
      _csrf: csrf,
      email: e,
      password: "correct horse battery",
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(html).toContain("Too many attempts");
    // An unknown email is throttled the same way (the throttle reveals nothing).
    ctx.clock.advance(15 * 60_000);
    expect(
      (await c.post("/dashboard/sign-in", { _csrf: csrf, email: e, password: "correct horse battery" }))[0].status,
    ).toBe(303);
  }, 60_000);

  test(`per IP: ${SIGNIN_MAX_FAILURES_PER_IP} failures from one address block it, another address still signs in`, async () => {
    const proxied = await testContext({ TRUST_PROXY: "1" });
    try {
      const e = `ip-${Bun.randomUUIDv7().slice(-6)}@example.com`;
      const owner = new Client(proxied.app);
      owner.headers = { "x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.7" };
      await owner.signUp(e);
      const bad = new Client(proxied.app);
      bad.headers = { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9" };
      const csrf = await bad.csrf("/dashboard/sign-in");
      for (let i = 0; i < SIGNIN_MAX_FAILURES_PER_IP; i++)
        await bad.post("/dashboard/sign-in", {
          _csrf: csrf,
          email: `nobody${i}@example.com`,
          password: "wrong password!",
        });
      expect(
        (await bad.post("/dashboard/sign-in", { _csrf: csrf, email: e, password: "correct horse battery" }))[0].status,
      ).toBe(429);
      const good = new Client(proxied.app);
      good.headers = { "x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.8" };
      expect((await good.signIn(e)).status).toBe(303);
    } finally {
      await proxied.close();
    }
  }, 60_000);
});

describe("headers and assets", () => {
  test("every dashboard response carries the security headers; CSP forbids inline scripts and framing", async () => {
    const c = new Client(ctx.app);
    await c.signUp(email());
    for (const p of [
      "/dashboard",
      "/dashboard/sign-in",
      "/dashboard/nope",
      "/dashboard/assets/dashboard.js",
      "/dashboard/keys",
    ]) {
      const [res, html] = await c.get(p);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      if (res.headers.get("content-type")?.startsWith("text/html")) {
        expect(inlineScripts(html)).toBe(0);
        expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers
        expect(res.headers.get("cache-control")).toBe("no-store");
      }
    }
    const [nf, body] = await c.get("/dashboard/nope");
    expect(nf.status).toBe(404);
    expect(body).toContain("Page not found");
    const [css] = await c.get("/dashboard/assets/dashboard.css");
    expect(css.headers.get("content-type")).toStartWith("text/css");
  });

  test("the API's 404 and OpenAPI document are unaffected", async () => {
    const [res, body] = await ctx.call("/v1/nope", { key: (await ctx.account()).key }); // every /v1 request needs a key first
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("NOT_FOUND");
    const [, doc] = await ctx.call("/openapi.json");
    expect(Object.keys(doc.paths).some((p: string) => p.startsWith("/dashboard"))).toBe(false);
  });
});
