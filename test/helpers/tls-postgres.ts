/**
 * A throwaway PostgreSQL server with `ssl=on`, for the database TLS tests: the machine's PostgreSQL binaries
 * (Debian's /usr/lib/postgresql/<version>/bin), a cluster in a temporary folder (trust auth), a CA and a server
 * certificate made here with `selfsigned`, listening on 127.0.0.1 and 127.0.0.2 (both loopback; the certificate
 * names only 127.0.0.1 and localhost, so 127.0.0.2 is "another host"). initdb refuses root: as root the cluster runs
 * as the `postgres` user.
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import selfsigned from "selfsigned";
import { freePort } from "../client/service.ts";

export interface TlsPostgres {
  port: number;
  /** PEM of the CA that signed the server certificate. */
  caFile: string;
  /** PEM of another CA, which signed nothing the server sends. */
  wrongCaFile: string;
  dir: string;
  /** Restarts the server with `ssl` on or off (off: it answers an SSLRequest with N, as a server without TLS does). */
  restart(ssl: boolean): void;
  stop(): void;
}

function binDir(): string {
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const v = versions.find((x) => existsSync(join(base, x, "bin", "initdb")));
  if (!v) throw new Error(`no PostgreSQL binaries under ${base}`);
  return join(base, v, "bin");
}

async function makeCa(name: string) {
  return selfsigned.generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
}

/** Starts the server (about 1–2 s: initdb, then pg_ctl start -w). Call `stop()` in afterAll. */
export async function startTlsPostgres(): Promise<TlsPostgres> {
  const bin = binDir();
  const root = userInfo().uid === 0;
  const dir = mkdtempSync("/tmp/ct-tls-pg-");
  const data = join(dir, "data");
  const run = (cmd: string, args: string[]) => {
    const r = root
      ? spawnSync("runuser", ["-u", "postgres", "--", cmd, ...args], { encoding: "utf8" })
      : spawnSync(cmd, args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const ca = await makeCa("Courier Tracking test CA");
  const wrongCa = await makeCa("Some other CA");
  const server = await selfsigned.generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  const files = {
    "ca.pem": ca.cert,
    "wrong-ca.pem": wrongCa.cert,
    "server.crt": server.cert,
    "server.key": server.private,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
  if (root) {
    const pg = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    const [uid, g] = [Number(pg.stdout.trim()), Number(gid.stdout.trim())];
    for (const p of [dir, ...Object.keys(files).map((f) => join(dir, f))]) chownSync(p, uid, g);
  }
  run(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = freePort();
  const opts = (ssl: boolean) =>
    [
      `-c port=${port}`,
      "-c listen_addresses='127.0.0.1,127.0.0.2'",
      `-c unix_socket_directories='${dir}'`,
      `-c ssl=${ssl ? "on" : "off"}`,
      `-c ssl_cert_file='${join(dir, "server.crt")}'`,
      `-c ssl_key_file='${join(dir, "server.key")}'`,
      "-c fsync=off",
    ].join(" ");
  run(join(bin, "pg_ctl"), ["-D", data, "-o", opts(true), "-l", join(dir, "log"), "-w", "-t", "20", "start"]);
  return {
    port,
    caFile: join(dir, "ca.pem"),
    wrongCaFile: join(dir, "wrong-ca.pem"),
    dir,
    restart(ssl) {
      run(join(bin, "pg_ctl"), [
        "-D",
        data,
        "-o",
        opts(ssl),
        "-l",
        join(dir, "log"),
        "-m",
        "fast",
        "-w",
        "-t",
        "20",
        "restart",
      ]);
    },
    stop() {
      try {
        run(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
