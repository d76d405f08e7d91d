/** The shipments page's pieces from our own history (docs/predictions.md): predicted day, stalled badge and filter. */
import { html, type SafeHtml } from "../html.ts";

/** The predicted delivery day, or a dash when there is none (fewer than 30 deliveries on the lane, or finished). */
export const predictedCell = (r: { predictedDate?: string | null }): SafeHtml | string =>
  r.predictedDate ? html`<time datetime="${r.predictedDate}">${r.predictedDate}</time>` : "–";

/** A badge beside the state while the shipment is stalled. */
export const stalledBadge = (r: { stalled?: boolean }): SafeHtml | string =>
  r.stalled
    ? html` <span class="badge state-exception" title="No new scan for longer than usual on this lane">stalled</span>`
    : "";
