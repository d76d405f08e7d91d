/** `public_url` of a follow and the rotate answer (docs/tracking-page.md#links). */
import { Type as T } from "@sinclair/typebox";

/** `public_url`: the buyer-facing tracking page of a follow (docs/tracking-page.md). */
export const PublicUrl = T.Union([T.String({ format: "uri" }), T.Null()], {
  description:
    "The public tracking page of this shipment for this account (`/t/{token}`), to send to the buyer: no API key, no personal data, revocable with POST /v1/shipments/{courier}/{tracking_number}/public-link/rotate and by unfollowing. Null while the account's public links are off (PATCH /v1/account/branding).",
  examples: ["https://track.example.com/t/3q2-7wEjW1cX9r8kYbVfZPqL0m4nD5sT6uA7vB8wC9x"],
});

export const PublicLinkResponse = T.Object(
  {
    success: T.Literal(true),
    data: T.Object({ courier: T.String(), tracking_number: T.String(), public_url: PublicUrl }),
  },
  { title: "PublicLinkResult" },
);
