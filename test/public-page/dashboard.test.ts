/**
 * The dashboard's Tracking page settings against the real app: the form saves the branding the API reads, a
 * low-contrast accent is refused with the ratio, links can be turned off, and the preview renders the branding on a
 * sample shipment under the page's own script-free policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, csrfOf } from "../dashboard/support.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.close());

const form = (csrf: string, over: Record<string, string> = {}) => ({
  _csrf: csrf,
  public_links_enabled: "on",
  display_name: "Chai & Co",
  accent_color: "#7a1f5c",
  support_url: "https://help.chai.example/orders",
  support_email: "care@chai.example",
  show_reference: "on",
  frame_ancestors: "https://shop.chai.example\nhttps://blog.chai.example",
  ...over,
});

describe("/dashboard/branding", () => {
  test("saves what the API then reads; the preview shows it without script; a low contrast is refused with its ratio", async () => {
    const c = new Client(ctx.app);
    const key = await c.signUp(`brand-${Bun.randomUUIDv7().slice(-6)}@example.com`);
    const [page, html] = await c.get("/dashboard/branding");
    expect(page.status).toBe(200);
    expect(html).toContain('aria-current="page">Tracking page</a>');
    const [saved] = await c.post("/dashboard/branding", form(csrfOf(html)));
    expect([saved.status, saved.headers.get("location")]).toEqual([303, "/dashboard/branding?done=saved"]);
    const [, api] = await ctx.call("/v1/account/branding", { key });
    expect(api.data).toMatchObject({
      public_links_enabled: true,
      display_name: "Chai & Co",
      accent_color: "#7a1f5c",
      show_reference: true,
      frame_ancestors: ["https://shop.chai.example", "https://blog.chai.example"],
    });

    const [pv, preview] = await c.get("/dashboard/branding/preview?lang=hi");
    expect(pv.status).toBe(200);
    expect(preview).toContain('<html lang="hi">');
    expect(preview).toContain("Chai &amp; Co");
    expect(preview).toContain("<style>:root{--accent:#7a1f5c}</style>");
    expect(preview).toContain('href="https://help.chai.example/orders"');
    expect(preview).not.toContain("<script");
    const csp = pv.headers.get("content-security-policy")!;
    expect(csp).toMatch(/^default-src 'none'; style-src 'self' 'sha256-/);
    expect(csp).not.toContain("script-src");
    expect(pv.headers.get("x-frame-options")).toBe("DENY");

    const [, again] = await c.get("/dashboard/branding");
    const [bad, badHtml] = await c.post("/dashboard/branding", form(csrfOf(again), { accent_color: "#ffcc00" }));
    expect(bad.status).toBe(422);
    expect(badHtml).toContain("contrast of 1.");
    expect(badHtml).toContain("4.5:1");

    const [, third] = await c.get("/dashboard/branding");
    const off = form(csrfOf(third));
    delete (off as Record<string, string>).public_links_enabled;
    await c.post("/dashboard/branding", off);
    expect((await ctx.call("/v1/account/branding", { key }))[1].data.public_links_enabled).toBe(false);
  });

  test("other dashboard pages keep the dashboard's own policy", async () => {
    const c = new Client(ctx.app);
    await c.signUp(`brand-${Bun.randomUUIDv7().slice(-6)}@example.com`);
    const [res] = await c.get("/dashboard/branding");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
  });
});
