/**
 * The public tracking link against the real app and database: `public_url` on every read, the page and its JSON
 * (headers, languages, no personal data, ETag), one 404 for unknown, malformed, revoked and switched-off links,
 * rotate and unfollow, branding checks, the page following a sandbox advance, limits and the transfer budget.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ShipmentListResponse, StoredShipmentResponse } from "../../src/modules/shipments/model.ts";
import { findLink, hashToken } from "../../src/modules/following/public-links.ts";
import { CSS_HREF, PAGE_LIMIT_PER_TOKEN } from "../../src/modules/public-page/serve.ts";
import { createRecheckRunner } from "../../src/modules/following/recheck.ts";
import { serviceRegistry } from "../../src/modules/metrics/registry.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ PUBLIC_BASE_URL: "https://track.example.com" });
});
afterAll(() => ctx.close());

const recheck = () => createRecheckRunner(ctx.deps, { random: () => 0.5 }).drain();
const PII = {
  consignee_name: "Ramesh Kumar Sharma",
  phone: "+919876543210",
  address: "Flat 12, 4th Cross, MG Road",
  email: "ramesh.buyer@example.net",
};

async function follow(key: string, courier: string, n: string, extra: Record<string, unknown> = {}) {
  const [res, body] = await ctx.call("/v1/shipments", {
    method: "POST",
    key,
    body: JSON.stringify({ shipments: [{ courier, tracking_number: n, ...extra }] }),
  });
  expect(res.status).toBe(202);
  return body.data.shipments[0] as { result: string; public_url: string | null };
}

/** GET a page path (the `public_url` without its origin). */
const open = (url: string, headers: Record<string, string> = {}) =>
  ctx.call(new URL(url, "https://track.example.com").pathname + new URL(url, "https://x").search, { headers });

describe("public_url", () => {
  test("is issued at follow, is the same on the stored read and the list, is an absolute /t/ URL with a 256-bit token stored only as its hash", async () => {
    const a = await ctx.account("business");
    const item = await follow(a.key, "delhivery", "3000000000101");
    expect(item.public_url).toMatch(/^https:\/\/track\.example\.com\/t\/[A-Za-z0-9_-]{43}$/);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/3000000000101", { key: a.key });
    expect(Value.Check(StoredShipmentResponse, stored)).toBe(true);
    expect(stored.follow.public_url).toBe(item.public_url);
    const [, list] = await ctx.call("/v1/shipments", { key: a.key });
    expect(Value.Check(ShipmentListResponse, list)).toBe(true);
    expect(list.data.shipments[0].public_url).toBe(item.public_url);
    const token = item.public_url!.split("/t/")[1]!;
    const rows = (await ctx.tdb.db
      .$client`select public_token_hash, public_link_nonce from follows where account_id = ${a.id}`) as unknown as {
      public_token_hash: string;
      public_link_nonce: string;
    }[];
    expect(rows[0]!.public_token_hash).toBe(hashToken(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    // Two accounts following one AWB get two different links.
    const b = await ctx.account("free");
    expect((await follow(b.key, "delhivery", "3000000000101")).public_url).not.toBe(item.public_url);
  });
});

describe("a follow made by GET /v1/track", () => {
  test("gets its link at once, so the payloads of its first events carry public_url", async () => {
    const a = await ctx.account("business");
    const [tr] = await ctx.call("/v1/track?courier=delhivery&tracking_number=3000000000221", { key: a.key });
    expect(tr.status).toBe(200);
    const [row] = (await ctx.tdb.db
      .$client`select public_token_hash from follows where account_id = ${a.id}`) as unknown as {
      public_token_hash: string | null;
    }[];
    expect(row!.public_token_hash).toMatch(/^[0-9a-f]{64}$/);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/3000000000221", { key: a.key });
    expect(hashToken(stored.follow.public_url.split("/t/")[1])).toBe(row!.public_token_hash!);
  });
});

describe("the page and its JSON", () => {
  test("a followed sandbox shipment's page: state in words, courier and AWB, timeline in IST, safe headers, ETag and 304", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000111");
    await recheck();
    const [res, page] = await open(public_url!, { "accept-language": "en-GB,en;q=0.9" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("private, max-age=60");
    expect(page).toContain('<html lang="en">');
    expect(page).toContain("<h1>On its way</h1>");
    expect(page).toContain("Delhivery");
    expect(page).toContain("3000000000111");
    expect(page).toContain("Times are in IST (UTC+05:30).");
    expect(page).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(page).not.toContain("<script");
    expect(page).toContain(`href="${CSS_HREF}"`);
    const etag = res.headers.get("etag")!;
    const [again] = await open(public_url!, { "accept-language": "en", "if-none-match": etag });
    expect(again.status).toBe(304);

    const [jr, json] = await open(`${public_url}.json`);
    expect(jr.status).toBe(200);
    expect(jr.headers.get("access-control-allow-origin")).toBe("*");
    expect(json.data).toMatchObject({
      language: "en",
      courier: { slug: "delhivery", name: "Delhivery" },
      tracking_number: "3000000000111",
      status: "in_transit",
      status_text: "On its way",
      time_zone: "Asia/Kolkata",
    });
    expect(json.data.checkpoints.length).toBeGreaterThan(0);
    expect(json.data.checkpoints[0].local_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+05:30$/);
  });

  test("Hindi by Accept-Language and by the switch, English by the switch", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000121");
    await recheck();
    const [, hi] = await open(public_url!, { "accept-language": "hi-IN,hi;q=0.9,en;q=0.8" });
    expect(hi).toContain('<html lang="hi">');
    expect(hi).toContain("<h1>रास्ते में है</h1>");
    expect(hi).toContain("ट्रैकिंग नंबर");
    expect(hi).toContain("समय IST (UTC+05:30) के अनुसार है।");
    expect(hi).toContain('hreflang="en" lang="en">View in English</a>');
    const [, en] = await open(`${public_url}?lang=en`, { "accept-language": "hi" });
    expect(en).toContain("<h1>On its way</h1>");
    expect(en).toContain('hreflang="hi" lang="hi">हिन्दी में देखें</a>');
    const [, hiJson] = await open(`${public_url}.json?lang=hi`);
    expect(hiJson.data.status_text).toBe("रास्ते में है");
  });

  test("a failed attempt says what it means and what to do, with the merchant's support link", async () => {
    const a = await ctx.account("business");
    await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: JSON.stringify({ display_name: "Chai & Co", support_url: "https://help.chai.example/orders" }),
    });
    const { public_url } = await follow(a.key, "delhivery", "3000000000133");
    await recheck();
    const [, json] = await open(`${public_url}.json`);
    expect(json.data.status).toBe("exception");
    expect(json.data.failed_attempt.what_to_do).toContain("contact the seller");
    const [, page] = await open(public_url!);
    expect(page).toContain("The courier could not deliver");
    expect(page).toContain('href="https://help.chai.example/orders"');
    expect(page).toContain("Chai &amp; Co");
  });

  test("no personal data in the HTML or JSON of a follow whose metadata and reference carry consignee details", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000141", {
      reference: "ORD-PRIVATE-7781",
      metadata: PII,
    });
    await recheck();
    const bodies = [(await open(public_url!))[1], JSON.stringify((await open(`${public_url}.json`))[1])];
    for (const body of bodies) {
      for (const v of [...Object.values(PII), "ORD-PRIVATE-7781", a.id, a.email]) expect(body).not.toContain(v);
    }
    // The reference only once the branding says to show it.
    await ctx.call("/v1/account/branding", { method: "PATCH", key: a.key, body: '{"show_reference":true}' });
    expect((await open(public_url!))[1]).toContain("ORD-PRIVATE-7781");
  });

  test("the page follows a sandbox advance", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000151");
    await recheck();
    const [r0, b0] = await open(`${public_url}.json`);
    const before = b0.data;
    const [adv] = await ctx.call("/v1/sandbox/shipments/delhivery/3000000000151/advance", {
      method: "POST",
      key: a.key,
    });
    expect(adv.status).toBe(200);
    const [r1, b1] = await open(`${public_url}.json`, { "if-none-match": r0.headers.get("etag")! });
    expect(r1.status).toBe(200);
    expect(b1.data.checkpoints.length).toBe(before.checkpoints.length + 1);
    expect(r1.headers.get("etag")).not.toBe(r0.headers.get("etag"));
  });
});

describe("links cannot be guessed and stop working", () => {
  test("unknown, malformed (bad escapes too), rotated-away and unfollowed links all answer the same 404", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000161");
    const path = new URL(public_url!).pathname;
    const [ok] = await ctx.call(path);
    expect(ok.status).toBe(200);

    const [rot, rotated] = await ctx.call("/v1/shipments/delhivery/3000000000161/public-link/rotate", {
      method: "POST",
      key: a.key,
    });
    expect(rot.status).toBe(200);
    expect(rotated.data.public_url).not.toBe(public_url);
    const [, stored] = await ctx.call("/v1/shipments/delhivery/3000000000161", { key: a.key });
    expect(stored.follow.public_url).toBe(rotated.data.public_url);

    const unknown = `/t/${"A".repeat(43)}`;
    const answers = [];
    for (const p of [path, unknown, "/t/short", `/t/${"%3Cscript%3E".repeat(3)}`, "/t/%ZZ", "/t/%00"]) {
      const [r, body] = await ctx.call(p);
      const [rj, json] = await ctx.call(`${p}.json`);
      answers.push({ status: r.status, body, jstatus: rj.status, json });
    }
    for (const x of answers) expect(x).toEqual(answers[1]!);
    expect(answers[0]!.status).toBe(404);
    expect(answers[0]!.jstatus).toBe(404);

    const newPath = new URL(rotated.data.public_url).pathname;
    expect((await ctx.call(newPath))[0].status).toBe(200);
    await ctx.call("/v1/shipments/delhivery/3000000000161", { method: "DELETE", key: a.key });
    const [gone, goneBody] = await ctx.call(newPath);
    expect([gone.status, goneBody]).toEqual([404, answers[1]!.body]);
  });

  test("the lookup probes by hash whatever the token is: a malformed one is hashed and looked up, never special-cased", async () => {
    const probes: string[] = [];
    const db = {
      $client: (strings: TemplateStringsArray, ...values: unknown[]) => {
        probes.push(String(values[0]));
        return Promise.resolve([]);
      },
    } as unknown as Parameters<typeof findLink>[0];
    for (const t of ["A".repeat(43), "x", "", "../../etc"]) expect(await findLink(db, t)).toBeUndefined();
    expect(probes).toHaveLength(4);
    for (const p of probes) expect(p).toMatch(/^[0-9a-f]{64}$/);
  });

  test("public links off: public_url null and the page 404; on again: the same link works", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000171");
    const path = new URL(public_url!).pathname;
    const [off] = await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: '{"public_links_enabled":false}',
    });
    expect(off.status).toBe(200);
    expect((await ctx.call("/v1/shipments/delhivery/3000000000171", { key: a.key }))[1].follow.public_url).toBeNull();
    expect((await ctx.call(path))[0].status).toBe(404);
    await ctx.call("/v1/account/branding", { method: "PATCH", key: a.key, body: '{"public_links_enabled":true}' });
    expect((await ctx.call(path))[0].status).toBe(200);
  });

  test(`more than ${PAGE_LIMIT_PER_TOKEN} views of one token in a minute: 429 with Retry-After`, async () => {
    const path = `/t/${"B".repeat(43)}`;
    // A fresh minute for this test's count (all test requests share one client address), and another after it.
    ctx.clock.advance(60_000);
    let last: Response | undefined;
    for (let i = 0; i <= PAGE_LIMIT_PER_TOKEN; i++) [last] = await ctx.call(path);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    ctx.clock.advance(60_000);
  });
});

describe("branding", () => {
  test("an accent below WCAG AA contrast is refused; a dark one is applied through a hashed inline style", async () => {
    const a = await ctx.account("business");
    const [bad, body] = await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: '{"accent_color":"#ffcc00"}',
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(body)).toContain("4.5:1");
    const [good, saved] = await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: '{"accent_color":"#7A1F5C","frame_ancestors":["https://shop.example.com"]}',
    });
    expect(good.status).toBe(200);
    expect(saved.data).toMatchObject({ accent_color: "#7a1f5c", frame_ancestors: ["https://shop.example.com"] });
    const { public_url } = await follow(a.key, "delhivery", "3000000000181");
    const [res, page] = await open(public_url!);
    expect(page).toContain("<style>:root{--accent:#7a1f5c}</style>");
    expect(res.headers.get("content-security-policy")).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors https://shop.example.com");
    expect(res.headers.get("x-frame-options")).toBeNull();
  });

  test("a PNG logo is stored and served beside the page; anything else is refused", async () => {
    const a = await ctx.account("business");
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
      "base64",
    );
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const [no] = await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: JSON.stringify({ logo_png_base64: svg.toString("base64") }),
    });
    expect(no.status).toBe(422);
    const [yes] = await ctx.call("/v1/account/branding", {
      method: "PATCH",
      key: a.key,
      body: JSON.stringify({ logo_png_base64: png.toString("base64"), display_name: "Chai" }),
    });
    expect(yes.status).toBe(200);
    const { public_url } = await follow(a.key, "delhivery", "3000000000191");
    const path = new URL(public_url!).pathname;
    const [, page] = await ctx.call(path);
    expect(page).toContain(`<img src="${path}/logo" alt="Chai" height="40">`);
    const res = await ctx.app.handle(new Request(`http://localhost${path}/logo`));
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await res.arrayBuffer())).toEqual(png);
  });
});

describe("budget and metrics", () => {
  test("the page, its stylesheet and no more stay under 30 KB; views are counted per account and day without addresses", async () => {
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000200");
    await recheck();
    const path = new URL(public_url!).pathname;
    const page = await ctx.app.handle(new Request(`http://localhost${path}`));
    const css = await ctx.app.handle(new Request(`http://localhost${CSS_HREF}`));
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const bytes = (await page.arrayBuffer()).byteLength + (await css.arrayBuffer()).byteLength;
    expect(bytes).toBeLessThan(30 * 1024);
    const rows = (await ctx.tdb.db.$client`select * from public_page_views where account_id = ${a.id}`) as unknown as {
      views: number;
    }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.views).toBeGreaterThanOrEqual(1);
    expect(Object.keys(rows[0]!).sort()).toEqual(["account_id", "day", "views"]);
  });

  test("requests are counted by kind and outcome in the process metrics, without any account or token label", async () => {
    const value = async (kind: string, outcome: string) => {
      const m = await serviceRegistry.getSingleMetric("courier_tracking_public_page_requests_total")?.get();
      return m?.values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;
    };
    const a = await ctx.account("business");
    const { public_url } = await follow(a.key, "delhivery", "3000000000210");
    const [okBefore, nfBefore] = [await value("json", "ok"), await value("html", "not_found")];
    await open(`${public_url}.json`);
    await ctx.call(`/t/${"C".repeat(43)}`);
    expect(await value("json", "ok")).toBe(okBefore + 1);
    expect(await value("html", "not_found")).toBe(nfBefore + 1);
    const text = await serviceRegistry.getSingleMetricAsString("courier_tracking_public_page_requests_total");
    expect(text).not.toContain(a.id);
    expect(text).not.toContain(new URL(public_url!).pathname.slice(3));
  });
});
