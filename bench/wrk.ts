/**
 * Runs Debian's `wrk` (a separate process, 2 threads, keep-alive) against one
 * target of `bun run bench` and parses the JSON line its Lua `done` hook
 * prints. Paths and `X-API-Key` values rotate per request.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Answers with a status outside 2xx/3xx. */
  non2xx: number;
  /** Connect, read, write errors and timeouts. */
  socketErrors: number;
}

const lua = (s: string) => JSON.stringify(s);

function script(paths: string[], keys: string[]): string {
  return `
local paths = { ${paths.map(lua).join(", ")} }
local keys = { ${keys.map(lua).join(", ")} }
local i = 0
request = function()
  i = i + 1
  local headers = {}
  if #keys > 0 then headers["x-api-key"] = keys[(i % #keys) + 1] end
  return wrk.format("GET", paths[(i % #paths) + 1], headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"status":%d,"socket":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
`;
}

let n = 0;

/** One wrk run of `seconds` against `base` with `connections` connections. */
export async function runWrk(o: {
  base: string;
  paths: string[];
  keys: string[];
  seconds: number;
  connections: number;
  dir: string;
}): Promise<WrkResult> {
  const file = join(o.dir, `wrk-${n++}.lua`);
  writeFileSync(file, script(o.paths, o.keys));
  const proc = Bun.spawn(
    ["wrk", "-t2", `-c${o.connections}`, `-d${o.seconds}s`, "--timeout", "30s", "-s", file, o.base + o.paths[0]],
    { stdout: "pipe", stderr: "pipe" },
  );
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const line = out.split("\n").find((l) => l.startsWith("WRKJSON "));
  if (!line)
    throw new Error(
      `wrk printed no figures (exit ${proc.exitCode}): ${out.slice(-1000)} ${await new Response(proc.stderr).text()}`,
    );
  const j = JSON.parse(line.slice(8)) as {
    requests: number;
    duration_us: number;
    status: number;
    socket: number;
    p50_us: number;
    p99_us: number;
  };
  return {
    rps: j.requests / (j.duration_us / 1e6),
    p50Ms: j.p50_us / 1000,
    p99Ms: j.p99_us / 1000,
    requests: j.requests,
    non2xx: j.status,
    socketErrors: j.socket,
  };
}
