/** Small helpers of `bun run bench`: RSS of a process, ports, medians and the printed table. */
import { readFileSync } from "node:fs";

/** Resident set size of process `pid` in MiB (Linux `/proc`), 0 when it is gone. */
export function procRss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time the process has used (user + system), in ms, from /proc/<pid>/stat; 0 when unreadable.
 * Clock ticks are 100 per second on Linux (sysconf CLK_TCK).
 */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may contain spaces: utime is the 14th field, stime the 15th.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** A free TCP port on loopback (bound, then released). */
export function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  rss: number;
  /** The target process's CPU time (user + system) per answered request, µs. */
  cpuUs: number;
  /** The database backends' CPU time per answered request, µs. */
  dbCpuUs: number;
  non2xx: number;
}

export interface Ratio {
  id: string;
  what: string;
  value: string;
  goal: string;
  ok?: boolean;
  note?: string;
}

/** Prints the throughput rows, then the ratios with their goals. */
export function printTable(rows: Row[], ratios: Ratio[]): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  const lpad = (s: string, n: number) => s.padStart(n);
  console.log("");
  console.log(
    `| ${pad("target (median of rounds)", 28)} | ${lpad("req/s", 8)} | ${lpad("p50 ms", 7)} | ${lpad("p99 ms", 7)} | ${lpad("RSS MiB", 7)} | ${lpad("CPU µs/req", 10)} | ${lpad("DB µs/req", 9)} | ${lpad("errors", 6)} |`,
  );
  console.log(
    `|${"-".repeat(30)}|${"-".repeat(10)}|${"-".repeat(9)}|${"-".repeat(9)}|${"-".repeat(9)}|${"-".repeat(12)}|${"-".repeat(11)}|${"-".repeat(8)}|`,
  );
  for (const r of rows)
    console.log(
      `| ${pad(r.name, 28)} | ${lpad(r.rps.toFixed(0), 8)} | ${lpad(r.p50.toFixed(2), 7)} | ${lpad(r.p99.toFixed(2), 7)} | ${lpad(r.rss.toFixed(0), 7)} | ${lpad(r.cpuUs.toFixed(1), 10)} | ${lpad(r.dbCpuUs.toFixed(1), 9)} | ${lpad(String(r.non2xx), 6)} |`,
    );
  console.log("");
  console.log(`| id | ${pad("measure", 46)} | ${pad("result", 14)} | ${pad("goal", 13)} | ok | note`);
  console.log(`|----|${"-".repeat(48)}|${"-".repeat(16)}|${"-".repeat(15)}|----|-----`);
  for (const x of ratios)
    console.log(
      `| ${x.id} | ${pad(x.what, 46)} | ${pad(x.value, 14)} | ${pad(x.goal, 13)} | ${x.ok === undefined ? "  " : x.ok ? "✓ " : "✗ "} | ${x.note ?? ""}`,
    );
}
