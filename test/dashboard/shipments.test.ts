/**
 * The merchant's shipments page (docs/dashboard.md, "Shipments"): CSV import and export round-trip 100 shipments,
 * per-item results equal to POST /v1/shipments', search by AWB or reference, filters, the formula guard on export,
 * and the hostile cases (CSRF, size, too many rows, unreadable bytes, another account). Real app, real database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { accounts, follows, shipments } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { usedThisMonth } from "../../src/modules/accounts/quota.ts";
import { setUsage } from "../../src/modules/accounts/service.ts";
import { parseImport } from "../../src/modules/dashboard/shipments.ts";
import { rebuildTransitStats } from "../../src/modules/predictions/rebuild.ts";
import { listShipments } from "../../src/modules/shipments/service.ts";
import { generateDeliveries, insertDeliveries } from "../helpers/history.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { seedRealistic } from "./layout-seed.ts";
import { Client } from "./support.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx?.close());

/** A signed-up merchant on `plan`, with its account id. */
async function merchant(plan = "growth"): Promise<{ c: Client; id: string }> {
  const c = new Client(ctx.app);
  const email = `ship-${Bun.randomUUIDv7().slice(-8)}@example.com`;
  await c.signUp(email);
  const [a] = await ctx.tdb.db.update(accounts).set({ plan }).where(eq(accounts.email, email)).returning();
  return { c, id: a!.id };
}

const COURIER_AWB: [string, (i: number) => string][] = [
  ["delhivery", (i) => `50112${String(i).padStart(8, "0")}`],
  ["bluedart", (i) => `7${String(i).padStart(10, "0")}`],
  ["xpressbees", (i) => `1412${String(i).padStart(10, "0")}`],
  ["dtdc", (i) => `D${String(i).padStart(8, "0")}`],
];
/** References a spreadsheet would run as formulas, and CSV's own specials (comma, quote; a semicolon, another list separator). */
const TRICKY = [
  '=HYPERLINK("http://x.example","x")',
  "+91 98765 43210",
  "-42",
  "@SUM(A1)",
  'ORDER "7", big',
  "Andheri; Mumbai West",
];

const hundred = Array.from({ length: 100 }, (_, i) => {
  const [courier, awb] = COURIER_AWB[i % COURIER_AWB.length]!;
  return { courier, tracking_number: awb(i), reference: i < TRICKY.length ? TRICKY[i]! : `ORD-${1000 + i}` };
});
const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

const exportRows = async (c: Client, query = "") => {
  const [res, body] = await c.get(`/dashboard/shipments/export.csv${query}`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  return parse(body, { columns: true }) as Record<string, string>[];
};
const key = (r: { courier: string; tracking_number: string; reference: string }) =>
  `${r.courier} ${r.tracking_number} ${r.reference}`;
const summary = (html: string) => /data-testid="follow-summary">([^<]*)</.exec(html)?.[1];

describe("CSV import and export", () => {
  test("100 shipments from a CSV file, exported again: the same couriers, AWBs and references; formula cells guarded; re-import counts nothing", async () => {
    const { c, id } = await merchant();
    const csv = [
      "courier,tracking_number,reference",
      ...hundred.map((h) => [h.courier, h.tracking_number, h.reference].map(csvCell).join(",")),
    ].join("\r\n");
    const [res, html] = await c.postMultipart("/dashboard/shipments/follow", {
      _csrf: await c.csrf("/dashboard/shipments"),
      file: new File([csv], "orders.csv", { type: "text/csv" }),
    });
    expect(res.status).toBe(200);
    expect(summary(html)).toBe("100 accepted, 0 invalid, 0 over the quota.");
    expect(await usedThisMonth(ctx.tdb.db, id, ctx.clock.now())).toBe(100);

    const rows = await exportRows(c);
    expect(rows).toHaveLength(100);
    expect(Object.keys(rows[0]!)).toEqual([
      "courier",
      "tracking_number",
      "reference",
      "state",
      "most_recent_status",
      "reason_code",
      "last_checkpoint_at",
      "estimated_delivery_date",
      "followed_since",
      "metadata",
      "stalled",
      "predicted_delivery_date",
      "predicted_delivery_earliest",
      "predicted_delivery_latest",
    ]);
    // Cells starting with = + - @ carry a leading ' (OWASP CSV injection); nothing else changed.
    const guarded = rows.filter((r) => r.reference!.startsWith("'")).map((r) => r.reference);
    expect(guarded.sort()).toEqual(
      TRICKY.slice(0, 4)
        .map((t) => `'${t}`)
        .sort(),
    );
    const unguard = (v: string) => (/^'[=+\-@]/.test(v) ? v.slice(1) : v);
    expect(
      rows
        .map((r) => key({ courier: r.courier!, tracking_number: r.tracking_number!, reference: unguard(r.reference!) }))
        .sort(),
    ).toEqual(hundred.map(key).sort());

    // The page lists 50 at a time; "Next" continues where the first page stopped.
    const [, page1] = await c.get("/dashboard/shipments");
    const next = /<a href="([^"]+)" rel="next">/.exec(page1)![1]!.replace(/&amp;/g, "&");
    const [, page2] = await c.get(next);
    const onPage = (h: string) => [...h.matchAll(/<tr data-awb="([^"]+)">/g)].map((x) => x[1]);
    expect([onPage(page1).length, onPage(page2).length, new Set([...onPage(page1), ...onPage(page2)]).size]).toEqual([
      50, 50, 100,
    ]);
    expect(page2).not.toContain('rel="next"');

    // The export imports as it is: every shipment already followed, nothing counted again.
    const [, raw] = await c.get("/dashboard/shipments/export.csv");
    const [again, againHtml] = await c.postMultipart("/dashboard/shipments/follow", {
      _csrf: await c.csrf("/dashboard/shipments"),
      file: new File([raw], "export.csv"),
    });
    expect(again.status).toBe(200);
    expect(summary(againHtml)).toBe("100 accepted, 0 invalid, 0 over the quota.");
    expect(againHtml.match(/>already followed</g)).toHaveLength(100);
    expect(await usedThisMonth(ctx.tdb.db, id, ctx.clock.now())).toBe(100);
    expect((await exportRows(c)).map((r) => r.reference).sort()).toEqual(rows.map((r) => r.reference).sort());
  });

  test("a pasted list gets the same per-item results as POST /v1/shipments, quota included", async () => {
    const list = [
      ["delhivery", "1234-5678-90121"],
      ["delhivery", "12AB"],
      ["delhivry", "1234567890121"],
      ["auto", "SF1234567891"],
      ["ekart", "FMPC1234567890"],
      ["bluedart", "50112345670"],
      ["delhivery", "1234567890121"],
    ];
    const viaDashboard = await merchant("free");
    const viaApi = await ctx.account("free");
    await setUsage(ctx.tdb.db, viaDashboard.id, 97, ctx.clock.now());
    await setUsage(ctx.tdb.db, viaApi.id, 97, ctx.clock.now());
    const [res, html] = await viaDashboard.c.post("/dashboard/shipments/follow", {
      _csrf: await viaDashboard.c.csrf("/dashboard/shipments"),
      list: list.map((l) => l.join(",")).join("\n"),
    });
    expect(res.status).toBe(200);
    const apiRes = await ctx.app.handle(
      new Request("http://localhost/v1/shipments", {
        method: "POST",
        headers: { "x-api-key": viaApi.key, "content-type": "application/json" },
        body: JSON.stringify({ shipments: list.map(([courier, tracking_number]) => ({ courier, tracking_number })) }),
      }),
    );
    const api = (
      (await apiRes.json()) as {
        data: { shipments: { result: string; already_followed?: boolean; error?: { code: string } }[] };
      }
    ).data.shipments;
    const shown = [
      ...html.matchAll(/<span class="badge (?:ok|bad)">([a-z ]+)<\/span><\/td><td data-label="Why">([A-Z_]*)/g),
    ].map((m) => [m[1], m[2]]);
    const expected = api.map((r) => [
      r.result === "accepted" ? (r.already_followed ? "already followed" : "followed") : r.result.replace(/_/g, " "),
      r.error?.code ?? "",
    ]);
    expect(shown).toEqual(expected);
    expect(shown.map(([r]) => r)).toEqual([
      "followed",
      "invalid",
      "invalid",
      "followed",
      "invalid",
      "followed",
      "already followed",
    ]);
    expect(await usedThisMonth(ctx.tdb.db, viaDashboard.id, ctx.clock.now())).toBe(100);
  });

  test("an item the API's schema refuses is invalid on its own line; the rest still follow", async () => {
    const { c } = await merchant();
    const [, html] = await c.post("/dashboard/shipments/follow", {
      _csrf: await c.csrf("/dashboard/shipments"),
      list: `courier,AWB\ndelhivery,${"9".repeat(70)}\ndelhivery,1234567890120`,
    });
    expect(summary(html)).toBe("1 accepted, 1 invalid, 0 over the quota.");
    expect(html).toContain("tracking_number: ");
  });
});

describe("export: the stored read's columns and OWASP's whole formula guard", () => {
  /** Cells a spreadsheet runs as formulas once it skips what precedes them (spaces, BOM, zero-width), or folds full-width forms. */
  const HOSTILE = [
    "\uFF1D1+1", // full-width equals
    "\uFF0B91 98765 43210", // full-width plus
    "\uFF0D42", // full-width hyphen-minus
    "\uFF20SUM(A1)", // full-width commercial at
    "\uFE661+1", // small equals sign
    " =1+1",
    '\uFEFF=HYPERLINK("http://x.example")',
    "\u00A0+1",
    "\u3000-1",
    "\u200B@SUM(A1)",
    "  \uFF1D1",
    "'=already quoted", // keeps its own quote through the round trip
  ];
  const SAFE = ["ORD-1", "a=b", "'plain", "\u2212 5"];

  test("every formula start is quoted, nothing else is; metadata, stalled and predicted delivery equal the list's; the import reads the references back", async () => {
    const m = await merchant();
    const now = ctx.clock.now();
    const lane = { courier: "dtdc", origin: "Pune", destination: "Kochi", medianH: 72, sigma: 0.3, meanGapH: 6 };
    await insertDeliveries(ctx.tdb.sql, generateDeliveries([lane], 31, now, 11));
    await rebuildTransitStats(ctx.tdb.db, now);
    ctx.deps.services.transitStats.invalidate();
    // An in-transit shipment on that lane: the generated checkpoints up to now, newest first.
    const [g] = generateDeliveries([lane], 1, now + 48 * 3_600_000, 12);
    const live = g!.checkpoints.filter((c) => c.state !== "delivered" && Date.parse(c.at) <= now);
    const refs = [...HOSTILE, ...SAFE];
    const rows = refs.map((reference, i) => ({
      id: newId("shp"),
      courier: "dtdc",
      trackingNumber: `X${String(90_000_000 + i)}`,
      state: "in_transit",
      mostRecentStatus: i === 0 ? "\t=cmd|' /C calc'!A0" : "In transit",
      checkpoints: live as never,
      originCity: lane.origin,
      destinationCity: lane.destination,
      stalledAt: i % 2 ? new Date(now - 3_600_000) : null,
      reference,
    }));
    await ctx.tdb.db.insert(shipments).values(rows.map(({ reference: _r, ...s }) => s));
    await ctx.tdb.db.insert(follows).values(
      rows.map((s, i) => ({
        accountId: m.id,
        shipmentId: s.id,
        reference: s.reference,
        metadata: (i === 0 ? { order: "=1+1", channel: "web" } : {}) as Record<string, string>,
        createdAt: new Date(now - i * 1000),
      })),
    );

    const [, raw] = await m.c.get("/dashboard/shipments/export.csv");
    const out = parse(raw, { columns: true }) as Record<string, string>[];
    const byAwb = new Map(out.map((r) => [r.tracking_number, r]));
    const quoted = (v: string) => `'${v}`;
    expect(rows.map((s) => byAwb.get(s.trackingNumber)!.reference)).toEqual(
      rows.map((s, i) => (i < HOSTILE.length ? quoted(s.reference) : s.reference)),
    );
    expect(byAwb.get(rows[0]!.trackingNumber)!.most_recent_status).toBe(quoted(rows[0]!.mostRecentStatus));

    // The other columns say what GET /v1/shipments says of each shipment.
    const listed = await listShipments(
      ctx.tdb.db,
      m.id,
      { limit: 100 },
      {},
      await ctx.deps.services.transitStats.get(),
    );
    expect(listed.shipments[0]!.predicted_delivery).toBeDefined();
    for (const s of listed.shipments) {
      const r = byAwb.get(s.tracking_number)!;
      expect([
        r.metadata,
        r.stalled,
        r.predicted_delivery_date,
        r.predicted_delivery_earliest,
        r.predicted_delivery_latest,
      ]).toEqual([
        JSON.stringify(s.metadata),
        String(s.stalled),
        s.predicted_delivery!.date,
        s.predicted_delivery!.earliest,
        s.predicted_delivery!.latest,
      ]);
    }
    expect(JSON.parse(byAwb.get(rows[0]!.trackingNumber)!.metadata!)).toEqual({ order: "=1+1", channel: "web" });

    // The import takes each quote off again: the references come back as they were.
    const imported = parseImport([raw]);
    expect("items" in imported && imported.items.map((it) => it.reference ?? null)).toEqual(
      listed.shipments.map((s) => s.reference),
    );
  });
});

describe("search and filters", () => {
  let m: { c: Client; id: string };
  beforeAll(async () => {
    m = await merchant();
    await seedRealistic(ctx, m.id);
  });
  const awbs = (html: string) => [...html.matchAll(/<tr data-awb="([^"]+)">/g)].map((x) => x[1]);
  const states = (html: string) => [...html.matchAll(/<span class="badge state-([a-z_]+)">/g)].map((x) => x[1]);

  test("the first page lists 50 with every control; filters by courier, state and reason combine; the form echoes them", async () => {
    const [, all] = await m.c.get("/dashboard/shipments");
    expect(awbs(all)).toHaveLength(50);
    for (const id of ["ship-q", "ship-state", "ship-courier", "ship-reason", "follow-list", "follow-file"])
      expect(all).toContain(`id="${id}"`);
    const [, dtdc] = await m.c.get("/dashboard/shipments?courier=dtdc");
    expect(awbs(dtdc)).toHaveLength(10);
    expect([...dtdc.matchAll(/<td data-label="Courier">([a-z]+)<\/td>/g)].every((x) => x[1] === "dtdc")).toBe(true);
    expect(dtdc).toContain('<option value="dtdc" selected>');
    const [, exc] = await m.c.get("/dashboard/shipments?state=exception&reason=address_issue");
    expect(states(exc)).toEqual(["exception", "exception", "exception"]);
    const [, both] = await m.c.get("/dashboard/shipments?state=pending&courier=delhivery");
    // pending: i % 7 == 0; delhivery: i % 5 == 0 → i = 0, 35.
    expect(states(both)).toEqual(["pending", "pending"]);
    expect((await exportRows(m.c, "?state=pending&courier=delhivery")).map((r) => r.state)).toEqual([
      "pending",
      "pending",
    ]);
  });

  test("search finds one shipment by its AWB (spaces, hyphens, lower case ignored) or by its reference", async () => {
    const [, byAwb] = await m.c.get(`/dashboard/shipments?q=${encodeURIComponent(" 5011-2345 74919 ")}`);
    expect(awbs(byAwb)).toEqual(["5011234574919"]);
    const [, byRef] = await m.c.get("/dashboard/shipments?q=ORDER-2026-11-10001");
    expect(awbs(byRef)).toHaveLength(1);
    expect(byRef).toContain("ORDER-2026-11-10001");
    const [, none] = await m.c.get("/dashboard/shipments?q=ORDER-2026-11-99999");
    expect(none).toContain("No followed shipment matches these filters.");
  });

  test("values no shipment can have list nothing, without an error; another account sees none of these", async () => {
    for (const q of [
      "state=lost",
      "courier=nope",
      "reason=because",
      `q=${"x".repeat(500)}`,
      `q=${encodeURIComponent("x\u0000")}`,
      "cursor=bm90LWEtY3Vyc29y",
    ]) {
      const [res, html] = await m.c.get(`/dashboard/shipments?${q}`);
      expect([res.status, awbs(html)]).toEqual([200, []]);
    }
    const other = await merchant();
    const [, theirs] = await other.c.get("/dashboard/shipments?courier=dtdc");
    expect(awbs(theirs)).toEqual([]);
    expect(await exportRows(other.c)).toEqual([]);
  });
});

describe("hostile requests", () => {
  test("no CSRF token → 403; cross-site → 403; over 64 KiB → 413; 101 rows → 422; bytes that are not UTF-8 → 422; signed out → sign-in", async () => {
    const { c, id } = await merchant();
    const csrf = await c.csrf("/dashboard/shipments");
    expect((await c.post("/dashboard/shipments/follow", { list: "1234567890120" }))[0].status).toBe(403);
    expect(
      (
        await c.post(
          "/dashboard/shipments/follow",
          { _csrf: csrf, list: "1234567890120" },
          { "sec-fetch-site": "cross-site" },
        )
      )[0].status,
    ).toBe(403);
    const [big] = await c.postMultipart("/dashboard/shipments/follow", {
      _csrf: csrf,
      file: new File(["x".repeat(70_000)], "big.csv"),
    });
    expect(big.status).toBe(413);
    const [many, manyHtml] = await c.post("/dashboard/shipments/follow", {
      _csrf: csrf,
      list: Array.from({ length: 101 }, (_, i) => `delhivery,50112${String(i).padStart(8, "0")}`).join("\n"),
    });
    expect(many.status).toBe(422);
    expect(manyHtml).toContain("at most 100 at a time");
    const [bad, badHtml] = await c.postMultipart("/dashboard/shipments/follow", {
      _csrf: csrf,
      file: new File([new Uint8Array([0x31, 0xff, 0xfe, 0x0a])], "bad.csv"),
    });
    expect(bad.status).toBe(422);
    expect(badHtml).toContain("not UTF-8 text");
    const [empty] = await c.post("/dashboard/shipments/follow", { _csrf: csrf, list: "  " });
    expect(empty.status).toBe(422);
    expect(await usedThisMonth(ctx.tdb.db, id, ctx.clock.now())).toBe(0);
    const anon = new Client(ctx.app);
    const [out] = await anon.get("/dashboard/shipments/export.csv");
    expect([out.status, out.headers.get("location")]).toEqual([
      303,
      "/dashboard/sign-in?next=%2Fdashboard%2Fshipments%2Fexport.csv",
    ]);
  });
});
