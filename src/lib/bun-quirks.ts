/** The one Bun workaround (oven-sh/bun#27805; docs/logging.md#destination); delete when its test fails. */
import diagnostics from "node:diagnostics_channel";

const proto = Object.getPrototypeOf(diagnostics.tracingChannel("courier-tracking:probe")) as object;

// Node's TracingChannel has `hasSubscribers` (v20.13); Bun's does not, so pino's `asJson`, which skips its traced
// path only on `hasSubscribers === false`, runs every log line through `traceSync` and `runStores`.
if (!("hasSubscribers" in proto))
  Object.defineProperty(proto, "hasSubscribers", {
    configurable: true,
    get(this: Record<"start" | "end" | "asyncStart" | "asyncEnd" | "error", { hasSubscribers: boolean }>) {
      return (
        this.start.hasSubscribers ||
        this.end.hasSubscribers ||
        this.asyncStart.hasSubscribers ||
        this.asyncEnd.hasSubscribers ||
        this.error.hasSubscribers
      );
    },
  });
