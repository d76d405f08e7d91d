/** The Postman collection's own shipment: a fresh AWB it draws itself, never one of the user's. */
/** The courier of the collection's own shipment (a sandbox scenario by its last digit, README "Sandbox couriers"). */
export const OWN_COURIER = "delhivery";

/** Pre-request script of the follow request: a fresh 13-digit delhivery AWB ending in 7 (sandbox: manifested, no scans). */
export const DRAW_OWN_AWB = {
  listen: "prerequest",
  script: {
    type: "text/javascript",
    exec: [
      `var awb = "9";`,
      `for (var i = 0; i < 11; i++) awb += Math.floor(Math.random() * 10);`,
      `pm.collectionVariables.set("own_tracking_number", awb + "7");`,
      `pm.collectionVariables.unset("own_followed");`,
    ],
  },
};

/** What each shipment request does to the account, appended to its description. */
export const SHIPMENT_NOTES: Record<string, string> = {
  followShipments:
    "Postman collection: follows ONE shipment of the collection's own, a fresh delhivery AWB ending in 7 (`own_tracking_number`, drawn on each run; manifested in the sandbox), and nothing else: one tracking request against the quota. Stop following a shipment removes it again at the end of the folder.",
  listShipments: "Postman collection: read only.",
  getShipment: "Postman collection: reads the collection's own shipment (`own_tracking_number`); read only.",
  updateShipment:
    "Postman collection: changes the reference and metadata of the collection's own shipment (`own_tracking_number`) only; free.",
  advanceSandboxShipment:
    "Postman collection: advances the collection's own shipment (`own_tracking_number`; manifested in the sandbox, so it has no step to take and is answered as it is) only; free.",
  rotatePublicLink:
    "Postman collection: revokes and reissues the public tracking link of the collection's own shipment (`own_tracking_number`) only; free.",
  createShipmentAction:
    "Postman collection: asks the courier to return the collection's own shipment (`own_tracking_number`; manifested in the sandbox, where a return is allowed) to origin, and nothing of yours; free.",
  listShipmentActions: "Postman collection: reads the actions on the collection's own shipment; read only.",
  unfollowShipment:
    "Postman collection: stops following the collection's own shipment (`own_tracking_number`) only, and only when Follow shipments followed it in this run; your own shipments are never unfollowed.",
  trackShipment:
    "Postman collection: looks up the sandbox AWB in the query (delivered in the sandbox, so not followed afterwards): one tracking request against the quota.",
};
