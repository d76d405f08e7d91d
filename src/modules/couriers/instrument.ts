/** Courier call metrics and spans: every adapter's `track` timed and counted by courier and outcome. */
import { startCourierCall } from "../metrics/registry.ts";
import { CourierError, type CourierAdapter } from "./adapters/types.ts";
import { inSpan, SpanKind } from "../../lib/tracing.ts";

/** The same adapters, each `track` timed and counted (`ok`, or the {@link CourierError} kind, or `error`). */
export function instrumentAdapters<K extends string>(
  adapters: Readonly<Record<K, CourierAdapter>>,
): Readonly<Record<K, CourierAdapter>> {
  const out = {} as Record<K, CourierAdapter>;
  for (const [id, adapter] of Object.entries(adapters) as [K, CourierAdapter][]) {
    out[id] = {
      ...adapter,
      // One CLIENT span per call when tracing is on; never the AWB (the access log keeps it out too).
      track: (trackingNumber, ctx) =>
        inSpan(
          `courier ${ctx.courier.slug}`,
          { "courier.slug": ctx.courier.slug },
          async (span) => {
            const end = startCourierCall(ctx.courier.slug);
            try {
              const snapshot = await adapter.track(trackingNumber, ctx);
              end("ok");
              span?.setAttribute("courier.outcome", "ok");
              return snapshot;
            } catch (err) {
              const outcome = err instanceof CourierError ? err.kind : "error";
              end(outcome);
              span?.setAttribute("courier.outcome", outcome);
              throw err;
            }
          },
          { kind: SpanKind.CLIENT },
        ),
    };
  }
  return out;
}
