/** TLS material (spec-map Decisions: HTTPS): the configured files, else a self-signed localhost certificate. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where it came from, for the start log. */
  source: "files" | "generated" | "reused";
  certFile: string;
}

/** A self-signed certificate valid for the given names and addresses (also used by tests). */
export async function selfSignedCertificate(
  names: string[] = ["localhost"],
  ips: string[] = ["127.0.0.1", "::1"],
  days = 825,
): Promise<{ cert: string; key: string }> {
  // Imported on use: only a first start without certificate files needs it (≈ 20 MiB resident otherwise).
  const { generate } = await import("selfsigned");
  const now = new Date();
  const pems = await generate([{ name: "commonName", value: names[0] ?? "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + days * 86_400_000),
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          ...names.map((value) => ({ type: 2 as const, value })),
          ...ips.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** Where the generated self-signed certificate lives (`DATA_DIR/tls/cert.pem`), written by {@link loadTls}. */
export const generatedCertFile = (dataDir: string) => join(resolve(dataDir, "tls"), "cert.pem");

/** Loads or creates the server's TLS material. @throws when configured files cannot be read. */
export async function loadTls(opts: {
  tls: { certFile: string; keyFile: string } | undefined;
  dataDir: string;
}): Promise<TlsMaterial> {
  if (opts.tls)
    return {
      cert: readFileSync(opts.tls.certFile, "utf8"),
      key: readFileSync(opts.tls.keyFile, "utf8"),
      source: "files",
      certFile: opts.tls.certFile,
    };
  const dir = resolve(opts.dataDir, "tls");
  const certFile = generatedCertFile(opts.dataDir);
  const keyFile = join(dir, "key.pem");
  if (existsSync(certFile) && existsSync(keyFile))
    return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), source: "reused", certFile };
  mkdirSync(dir, { recursive: true });
  const { cert, key } = await selfSignedCertificate();
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(certFile, cert);
  return { cert, key, source: "generated", certFile };
}
