/**
 * Preloaded into the service by test/ops/crash.test.ts (`bun run --preload`), never part of it: once the
 * service is ready (`/readyz` on its internal port) and has answered one request on its public port, raises an
 * error nothing catches, thrown from a timer
 * (`CRASH_KIND=throw`) or a rejected promise nobody awaits (`CRASH_KIND=reject`).
 */
const timer = setInterval(async () => {
  const up = await fetch(`http://127.0.0.1:${process.env.ADMIN_PORT}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (!up) return;
  clearInterval(timer);
  // One request on the public port first: its access line is still in the log buffer when the error comes.
  await fetch(`https://127.0.0.1:${process.env.PORT}/v1/couriers`, {
    headers: { "x-request-id": `before-crash-${process.env.CRASH_KIND}` },
    tls: { rejectUnauthorized: false },
  } as RequestInit);
  if (process.env.CRASH_KIND === "reject") void Promise.reject(new Error("planted rejection"));
  else
    setTimeout(() => {
      throw new Error("planted error");
    }, 0);
}, 100);
