/** The shipments page: the filtered list, its CSV export, and following from a pasted list or a CSV file. */
import { Elysia } from "elysia";
import { AppError } from "../../../lib/errors.ts";
import { htmlResponse, pageSession, str, unreadableFields, withForm, withSession, type RouteDeps } from "../http.ts";
import {
  exportCsv,
  filtersOf,
  followImported,
  parseImport,
  shipmentsPageRows,
  type ImportResult,
} from "../shipments.ts";
import type { DashboardSession } from "../session.ts";
import { messagePage } from "../views/account.ts";
import { shipmentsPage } from "../views/shipments.ts";

/** Routes of the shipments page (docs/dashboard.md, "Shipments"). */
export function shipmentRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const page = async (
    s: DashboardSession,
    query: Record<string, unknown>,
    opts: { results?: ImportResult[]; error?: string } = {},
  ) => {
    const filters = filtersOf(query);
    const cursor = typeof query.cursor === "string" ? query.cursor : undefined;
    return shipmentsPage(
      pageSession(s),
      {
        ...(await shipmentsPageRows(deps.db, s.account.id, filters, cursor, await deps.services.transitStats.get())),
        filters,
      },
      opts,
    );
  };
  return new Elysia()
    .get("/dashboard/shipments", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) => htmlResponse(await page(s, query))),
    )
    .get("/dashboard/shipments/export.csv", ({ request, cookie, query }) =>
      withSession(rd, { request, cookie }, async (s) => {
        const name = `shipments-${new Date(deps.clock.now()).toISOString().slice(0, 10)}.csv`;
        const stats = await deps.services.transitStats.get();
        return new Response(exportCsv(deps.db, s.account.id, filtersOf(query), stats), {
          headers: {
            "content-type": "text/csv; charset=utf-8",
            "content-disposition": `attachment; filename="${name}"`,
          },
        });
      }),
    )
    .post("/dashboard/shipments/follow", ({ request, cookie, body }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        if (unreadableFields(form, ["list", "file"]))
          return htmlResponse(
            await page(s, {}, { error: "The list or file is not UTF-8 text (or holds a NUL character)." }),
            422,
          );
        const texts = [str(form, "list"), str(form, "file")].filter((t) => t.trim() !== "");
        if (texts.length === 0)
          return htmlResponse(await page(s, {}, { error: "Paste a list or choose a CSV file." }), 422);
        const parsed = parseImport(texts);
        if ("error" in parsed) return htmlResponse(await page(s, {}, { error: parsed.error }), 422);
        try {
          const results = await followImported(deps, { account: s.account, keyId: "dashboard" }, parsed.items);
          return htmlResponse(await page(s, {}, { results }));
        } catch (e) {
          if (e instanceof AppError && e.code === "ACCOUNT_NEEDS_ATTENTION")
            return htmlResponse(messagePage("Account needs attention", e.message, pageSession(s)), 402);
          throw e;
        }
      }),
    );
}
