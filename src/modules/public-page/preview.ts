/** The dashboard's preview of the tracking page: the account's branding on a sample shipment (no real data). */
import type { Branding } from "./branding.ts";
import { type Lang, words } from "./i18n.ts";
import type { PageData } from "./service.ts";
import { accentStyle, trackingPage } from "./view.ts";
import { CSS_HREF, pageHeaders } from "./serve.ts";

/** A sample follow: a failed attempt (so the support links show) with a predicted window and a short timeline. */
function sample(b: Branding, lang: Lang): PageData {
  const w = words(lang);
  const cp = (at: string, local: string, status: string, text: string, location: string) => ({
    at,
    local_time: local,
    status,
    text,
    location,
  });
  return {
    language: lang,
    courier: { slug: "delhivery", name: "Delhivery" },
    tracking_number: "1234567890121",
    status: "exception",
    status_text: w.sub.delivery_attempt_failed ?? w.state.exception,
    delivered: false,
    predicted_delivery: { earliest: "2026-11-06", latest: "2026-11-07", date: "2026-11-06" },
    courier_estimate: null,
    stalled: false,
    failed_attempt: {
      reason_code: "customer_unavailable",
      meaning: w.reason.customer_unavailable,
      what_to_do: w.whatToDo,
    },
    time_zone: "Asia/Kolkata",
    checkpoints: [
      cp(
        "2026-11-05T08:40:00Z",
        "2026-11-05T14:10+05:30",
        "exception",
        w.sub.delivery_attempt_failed ?? w.state.exception,
        "Bengaluru",
      ),
      cp("2026-11-05T02:35:00Z", "2026-11-05T08:05+05:30", "out_for_delivery", w.state.out_for_delivery, "Bengaluru"),
      cp(
        "2026-11-03T03:45:00Z",
        "2026-11-03T09:15+05:30",
        "in_transit",
        w.sub.picked_up ?? w.state.in_transit,
        "Mumbai",
      ),
    ],
    reference: b.showReference ? "ORD-10042" : null,
    merchant: {
      name: b.displayName,
      accent_color: b.accentColor,
      support_url: b.supportUrl,
      support_email: b.supportEmail,
      has_logo: b.logoData !== null,
    },
    updated_at: "2026-11-05T08:40:00Z",
  };
}

/** The preview page (HTML) and its headers: the tracking page's own policy (no script), never framed. */
export function previewPage(
  b: Branding,
  lang: Lang,
  logoHref: string,
): { body: string; headers: Record<string, string> } {
  const data = sample(b, lang);
  const body = trackingPage(data, {
    selfPath: "/dashboard/branding/preview",
    cssHref: CSS_HREF,
    logoHref: data.merchant.has_logo ? logoHref : null,
  });
  return { body, headers: { ...pageHeaders(accentStyle(b.accentColor).source, []), "cache-control": "no-store" } };
}
