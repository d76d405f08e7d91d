/**
 * Preloaded into the service by test/ops/crash.test.ts (`bun run --preload`), never part of it: once the
 * service is ready (`/readyz` on its internal port), raises an error nothing catches, thrown from a timer
 * (`CRASH_KIND=throw`) or a rejected promise nobody awaits (`CRASH_KIND=reject`).
 */
const timer = setInterval(async () => {
  const up = await fetch(`http://127.0.0.1:${process.env.ADMIN_PORT}/readyz`).then((r) => r.ok, () => false);
  if (!up) return;
  clearInterval(timer);
  if (process.env.CRASH_KIND === "reject") void Promise.reject(new Error("planted rejection"));
  else
    setTimeout(() => {
      throw new Error("planted error");
    }, 0);
}, 100);
