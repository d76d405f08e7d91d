/**
 * The dashboard's Tracking page settings against the real app: the form saves the branding the API reads, a
 * low-contrast accent is refused with the ratio, links can be turned off, and the preview renders the branding on a
 * sample shipment under the page's own script-free policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client, csrfOf } from "../dashboard/support.ts";
import { BRANDING_FORM_BYTES } from "../../src/modules/dashboard/routes/branding.ts";

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

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b: Uint8Array) => {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Uint8Array) => {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.byteLength);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};

/** A valid RGB PNG of `w`×`h` noisy pixels (bytes ≥ 0x80 and invalid UTF-8 throughout, so a text read corrupts it). */
function makePng(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const rows = Buffer.alloc(h * (1 + 3 * w));
  let seed = 0x2545f491;
  for (let i = 0; i < rows.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    rows[i] = i % (1 + 3 * w) === 0 ? 0 : 0x80 | (seed >>> 24);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", Bun.deflateSync(rows)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

const pngFile = (bytes: Uint8Array, name = "logo.png", type = "image/png") =>
  new File([new Uint8Array(bytes)], name, { type });

describe("/dashboard/branding logo upload", () => {
  test("a PNG chosen in the form is stored byte for byte, previewed, and served on the public page", async () => {
    const c = new Client(ctx.app);
    const key = await c.signUp(`logo-${Bun.randomUUIDv7().slice(-6)}@example.com`);
    const png = makePng(8, 8);
    expect(() => new TextDecoder("utf-8", { fatal: true }).decode(png)).toThrow();
    const [, html] = await c.get("/dashboard/branding");
    expect(html).toContain('enctype="multipart/form-data"');
    expect(html).toContain('<input type="file" id="logo" name="logo" accept="image/png"');
    const [saved] = await c.postMultipart("/dashboard/branding", { ...form(csrfOf(html)), logo: pngFile(png) });
    expect([saved.status, saved.headers.get("location")]).toEqual([303, "/dashboard/branding?done=saved"]);

    const [, after] = await c.get("/dashboard/branding");
    expect(after).toContain(`<img src="data:image/png;base64,${png.toString("base64")}"`);
    const own = await ctx.app.handle(
      new Request("http://localhost/dashboard/branding/logo", { headers: c.cookieHeader() }),
    );
    expect(new Uint8Array(await own.arrayBuffer())).toEqual(new Uint8Array(png));

    const [res, body] = await ctx.call("/v1/shipments", {
      method: "POST",
      key,
      body: JSON.stringify({ shipments: [{ courier: "delhivery", tracking_number: "3000000000207" }] }),
    });
    expect(res.status).toBe(202);
    const path = new URL(body.data.shipments[0].public_url).pathname;
    const pub = await ctx.app.handle(new Request(`http://localhost${path}/logo`));
    expect([pub.status, pub.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect(new Uint8Array(await pub.arrayBuffer())).toEqual(new Uint8Array(png));

    // Saving again without choosing a file keeps the logo (the browser sends an empty file part).
    const [kept] = await c.postMultipart("/dashboard/branding", {
      ...form(csrfOf(after)),
      logo: pngFile(new Uint8Array(0), "", "application/octet-stream"),
    });
    expect(kept.status).toBe(303);
    expect((await ctx.call("/v1/account/branding", { key }))[1].data.has_logo).toBe(true);
  });

  test("a non-PNG, a PNG signature before junk, an oversize file, no CSRF token or another content type are refused, never a 500", async () => {
    const c = new Client(ctx.app);
    const key = await c.signUp(`logo-${Bun.randomUUIDv7().slice(-6)}@example.com`);
    const refused = async (logo: File, status: number, text: string) => {
      const [, html] = await c.get("/dashboard/branding");
      const [res, body] = await c.postMultipart("/dashboard/branding", { ...form(csrfOf(html)), logo });
      expect([res.status, res.headers.get("content-type")]).toEqual([status, "text/html; charset=utf-8"]);
      expect(body).toContain(text);
    };
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    await refused(pngFile(svg, "logo.png"), 422, "Logo must be a PNG image");
    const junk = Buffer.concat([makePng(1, 1).subarray(0, 8), Buffer.from("not a chunk at all, only junk")]);
    await refused(pngFile(junk), 422, "Logo must be a PNG image");
    await refused(pngFile(makePng(128, 128)), 413, "Form too large");
    // Within the form's cap but over the logo's: the API's own size rule answers.
    const big = Buffer.concat([makePng(1, 1), new Uint8Array(17 * 1024)]);
    await refused(pngFile(big), 422, "Logo must be a PNG of 1 to 16384 bytes");

    const [noCsrf] = await c.postMultipart("/dashboard/branding", { ...form(""), logo: pngFile(makePng(2, 2)) });
    expect(noCsrf.status).toBe(403);
    const [, html] = await c.get("/dashboard/branding");
    const plain = await ctx.app.handle(
      new Request("http://localhost/dashboard/branding", {
        method: "POST",
        headers: { ...c.cookieHeader(), "content-type": "text/plain" },
        body: `_csrf=${csrfOf(html)}`,
      }),
    );
    expect(plain.status).toBe(403);
    expect((await ctx.call("/v1/account/branding", { key }))[1].data.has_logo).toBe(false);
  });

  test("a streamed upload past the form's cap is not read beyond it", async () => {
    const c = new Client(ctx.app);
    await c.signUp(`logo-${Bun.randomUUIDv7().slice(-6)}@example.com`);
    const piece = new Uint8Array(4 * 1024).fill(0x89);
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 1024 * 1024) return controller.close();
        pulled += piece.byteLength;
        controller.enqueue(piece);
      },
    });
    const res = await ctx.app.handle(
      new Request("http://localhost/dashboard/branding", {
        method: "POST",
        headers: { ...c.cookieHeader(), "content-type": "multipart/form-data; boundary=x" },
        body,
      }),
    );
    expect(res.status).toBe(413);
    expect(await res.text()).toContain("larger than 24 KiB");
    expect(pulled).toBeLessThan(BRANDING_FORM_BYTES + 4 * piece.byteLength);
  });
});
