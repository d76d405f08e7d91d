/** The tracking page's words, English and Hindi (docs/tracking-page.md#languages): buyer words, never the courier's. */
import type { ReasonCode } from "../../domain/ndr.ts";
import type { ShipmentState, SubStatus } from "../../domain/states.ts";

export type Lang = "en" | "hi";

/**
 * The language of a request: `?lang=` when it names one, else the first of `Accept-Language` we have (RFC 9110
 * 12.5.4 weights honoured), else English.
 */
export function pickLang(queryLang: string | null, acceptLanguage: string | null): Lang {
  if (queryLang === "en" || queryLang === "hi") return queryLang;
  const ranked = (acceptLanguage ?? "")
    .slice(0, 512)
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().toLowerCase().split(";");
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { primary: (tag ?? "").split("-")[0] ?? "", q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranked) if (r.primary === "en" || r.primary === "hi") return r.primary;
  return "en";
}

interface Words {
  title: string;
  state: Record<ShipmentState, string>;
  sub: Partial<Record<SubStatus, string>>;
  predicted: string;
  courierEstimate: string;
  deliveredOn: string;
  courier: string;
  awb: string;
  reference: string;
  timeline: string;
  noCheckpoints: string;
  stalled: string;
  failedTitle: string;
  reason: Record<ReasonCode, string>;
  whatToDo: string;
  contact: string;
  contactGeneric: string;
  supportLink: string;
  supportEmail: string;
  switchTo: string;
  timesIn: (zone: string) => string;
  notFoundTitle: string;
  notFound: string;
  limited: string;
}

const en: Words = {
  title: "Track your shipment",
  state: {
    pending: "Order received, waiting for the courier",
    in_transit: "On its way",
    out_for_delivery: "Out for delivery today",
    delivered: "Delivered",
    exception: "There is a problem with the delivery",
    returned: "Returned to the seller",
    cancelled: "Cancelled",
  },
  sub: {
    picked_up: "Picked up by the courier",
    reached_destination: "Reached your city",
    ready_for_pickup: "Ready for you to collect",
    delayed: "Delayed",
    delivery_attempt_failed: "Delivery attempt failed",
    held: "Held at the courier's facility",
    rto_initiated: "Being returned to the seller",
    rto_in_transit: "Being returned to the seller",
    rto_delivered: "Returned to the seller",
  },
  predicted: "Expected delivery",
  courierEstimate: "Courier's estimate",
  deliveredOn: "Delivered on",
  courier: "Courier",
  awb: "Tracking number",
  reference: "Order",
  timeline: "Journey",
  noCheckpoints: "No scans from the courier yet. This page updates when the courier reports one.",
  stalled:
    "No new update from the courier for a while. Shipments often move without a scan; if nothing changes soon, contact the seller.",
  failedTitle: "The courier could not deliver",
  reason: {
    customer_unavailable: "Nobody was available to receive the parcel.",
    customer_refused: "The parcel was refused at the door.",
    address_issue: "The courier could not find or reach the address.",
    cod_not_ready: "The cash-on-delivery amount was not ready.",
    rescheduled_by_customer: "The delivery was rescheduled at the buyer's request.",
    premises_closed: "The premises were closed.",
    out_of_delivery_area: "The address is outside the courier's delivery area.",
    damaged: "The parcel was damaged.",
    lost: "The courier reports the parcel as lost.",
    weather_or_disaster: "Bad weather or a disruption stopped the delivery.",
    other: "The courier reported a problem.",
  },
  whatToDo:
    "The courier usually tries again on the next working day. To change the address or the time, or if you did not expect this, contact the seller.",
  contact: "Contact",
  contactGeneric: "Contact the seller you bought from.",
  supportLink: "Help page",
  supportEmail: "E-mail",
  switchTo: "हिन्दी में देखें",
  timesIn: (zone) => `Times are in ${zone}.`,
  notFoundTitle: "Link not found",
  notFound: "This tracking link does not exist or is no longer valid. Ask the seller for a new one.",
  limited: "Too many requests. Try again in a minute.",
};

const hi: Words = {
  title: "अपना शिपमेंट ट्रैक करें",
  state: {
    pending: "ऑर्डर मिल गया है, कूरियर की प्रतीक्षा है",
    in_transit: "रास्ते में है",
    out_for_delivery: "आज डिलीवरी के लिए निकला है",
    delivered: "डिलीवर हो गया",
    exception: "डिलीवरी में समस्या है",
    returned: "विक्रेता को लौटा दिया गया",
    cancelled: "रद्द कर दिया गया",
  },
  sub: {
    picked_up: "कूरियर ने पार्सल ले लिया",
    reached_destination: "आपके शहर पहुँच गया",
    ready_for_pickup: "आपके लेने के लिए तैयार",
    delayed: "देरी हो रही है",
    delivery_attempt_failed: "डिलीवरी का प्रयास असफल रहा",
    held: "कूरियर के केंद्र पर रोका गया",
    rto_initiated: "विक्रेता को लौटाया जा रहा है",
    rto_in_transit: "विक्रेता को लौटाया जा रहा है",
    rto_delivered: "विक्रेता को लौटा दिया गया",
  },
  predicted: "अनुमानित डिलीवरी",
  courierEstimate: "कूरियर का अनुमान",
  deliveredOn: "डिलीवरी की तारीख",
  courier: "कूरियर",
  awb: "ट्रैकिंग नंबर",
  reference: "ऑर्डर",
  timeline: "यात्रा",
  noCheckpoints: "कूरियर से अभी कोई स्कैन नहीं आया है। स्कैन आने पर यह पेज अपडेट होगा।",
  stalled:
    "कुछ समय से कूरियर से कोई नई जानकारी नहीं आई है। पार्सल अक्सर बिना स्कैन के भी आगे बढ़ते हैं; जल्द कुछ न बदले तो विक्रेता से संपर्क करें।",
  failedTitle: "कूरियर डिलीवरी नहीं कर सका",
  reason: {
    customer_unavailable: "पार्सल लेने के लिए कोई उपलब्ध नहीं था।",
    customer_refused: "दरवाज़े पर पार्सल लेने से मना किया गया।",
    address_issue: "कूरियर पता ढूँढ या पहुँच नहीं सका।",
    cod_not_ready: "कैश-ऑन-डिलीवरी की राशि तैयार नहीं थी।",
    rescheduled_by_customer: "खरीदार के कहने पर डिलीवरी का समय बदला गया।",
    premises_closed: "परिसर बंद था।",
    out_of_delivery_area: "पता कूरियर के डिलीवरी क्षेत्र से बाहर है।",
    damaged: "पार्सल क्षतिग्रस्त हो गया।",
    lost: "कूरियर के अनुसार पार्सल खो गया है।",
    weather_or_disaster: "खराब मौसम या किसी बाधा के कारण डिलीवरी नहीं हो सकी।",
    other: "कूरियर ने एक समस्या बताई है।",
  },
  whatToDo:
    "कूरियर आमतौर पर अगले कार्य दिवस पर फिर से प्रयास करता है। पता या समय बदलने के लिए, या अगर आपको यह अपेक्षित नहीं था, तो विक्रेता से संपर्क करें।",
  contact: "संपर्क करें",
  contactGeneric: "जिस विक्रेता से आपने खरीदा है, उससे संपर्क करें।",
  supportLink: "सहायता पेज",
  supportEmail: "ई-मेल",
  switchTo: "View in English",
  timesIn: (zone) => `समय ${zone} के अनुसार है।`,
  notFoundTitle: "लिंक नहीं मिला",
  notFound: "यह ट्रैकिंग लिंक मौजूद नहीं है या अब मान्य नहीं है। विक्रेता से नया लिंक माँगें।",
  limited: "बहुत अधिक अनुरोध। एक मिनट बाद फिर कोशिश करें।",
};

/** The words of `lang`. */
export const words = (lang: Lang): Words => (lang === "hi" ? hi : en);
