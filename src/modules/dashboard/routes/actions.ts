/** A followed shipment's NDR actions in the dashboard (docs/ndr-actions.md, docs/dashboard.md): page, confirm, send. */
import { Elysia } from "elysia";
import { ACTION_NAMES, type ActionName } from "../../../domain/actions.ts";
import { AppError, RequestValidationError } from "../../../lib/errors.ts";
import { courierBySlug } from "../../couriers/catalogue.ts";
import { followed, listActions, requestAction } from "../../actions/service.ts";
import {
  htmlResponse,
  pageSession,
  redirect,
  str,
  withForm,
  withSession,
  type FormBody,
  type RouteDeps,
} from "../http.ts";
import type { DashboardSession } from "../session.ts";
import { messagePage } from "../views/account.ts";
import { actionsPage, confirmPage } from "../views/actions.ts";
import type { Flash } from "../views/layout.ts";
import { defined } from "../../../lib/defined.ts";

type Params = { courier: string; awb: string };

/** The action a form asks for, its date and consignee fields (empty ones dropped); undefined for an unknown action. */
function fieldsOf(form: FormBody) {
  const action = str(form, "action") as ActionName;
  if (!ACTION_NAMES.includes(action)) return undefined;
  const consignee = Object.fromEntries(
    (["name", "phone", "address"] as const).map((k) => [k, str(form, k).trim()]).filter(([, v]) => v !== ""),
  );
  const date = str(form, "deferred_date").trim();
  return {
    action,
    ...(date ? { deferred_date: date } : {}),
    ...(Object.keys(consignee).length ? { consignee } : {}),
  };
}

/** Routes of a shipment's actions page. */
export function actionRoutes(rd: RouteDeps) {
  const { deps } = rd;
  const page = async (s: DashboardSession, p: Params, flash?: Flash, status = 200) => {
    try {
      const ship = await followed(deps, s.account.id, p.courier, p.awb);
      const courier = defined(courierBySlug(ship.courier), `courier ${ship.courier}`);
      const rules = deps.backends.actionRules(courier);
      return htmlResponse(
        actionsPage(
          pageSession(s),
          {
            courier: courier.slug,
            courierName: courier.name,
            trackingNumber: ship.tracking_number,
            state: ship.state,
            reasonCode: null,
            available: ACTION_NAMES.filter((a) => rules?.[a]),
            history: await listActions(deps, s.account.id, courier.slug, ship.tracking_number),
          },
          flash,
        ),
        status,
      );
    } catch (e) {
      if (e instanceof AppError && e.code === "SHIPMENT_NOT_FOLLOWED")
        return htmlResponse(messagePage("Shipment not followed", e.message, pageSession(s)), 404);
      throw e;
    }
  };
  const path = "/dashboard/shipments/:courier/:awb/actions";
  return new Elysia()
    .get(path, ({ request, cookie, params }) => withSession(rd, { request, cookie }, (s) => page(s, params)))
    .post(`${path}/confirm`, ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const fields = fieldsOf(form);
        if (!fields) return page(s, params, { kind: "error", text: "Choose one of the actions." }, 422);
        const courier = courierBySlug(params.courier.toLowerCase());
        if (!courier) return page(s, params);
        const d = { courier: courier.slug, courierName: courier.name, trackingNumber: params.awb };
        return htmlResponse(confirmPage(pageSession(s), d, fields));
      }),
    )
    .post(path, ({ request, cookie, body, params }) =>
      withForm(rd, { request, cookie, body }, async (s, form) => {
        const fields = fieldsOf(form);
        if (!fields) return page(s, params, { kind: "error", text: "Choose one of the actions." }, 422);
        try {
          await requestAction(deps, { account: s.account, keyId: "dashboard" }, params.courier, params.awb, fields);
        } catch (e) {
          if (e instanceof AppError && e.code !== "SHIPMENT_NOT_FOLLOWED")
            return page(s, params, { kind: "error", text: e.message }, e.status);
          if (e instanceof RequestValidationError)
            return page(s, params, { kind: "error", text: e.items.map((i) => i.msg).join(" ") }, 422);
          throw e;
        }
        return redirect(
          `/dashboard/shipments/${encodeURIComponent(params.courier)}/${encodeURIComponent(params.awb)}/actions?sent=1`,
        );
      }),
    );
}
