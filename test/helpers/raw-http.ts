/**
 * Raw HTTP/1.1 over a loopback TCP socket, for requests `fetch` refuses to
 * send (malformed Host, control bytes, lying Content-Length …) and for
 * watching exactly what the server answers. NETWORK SAFETY: 127.0.0.1 only.
 */
import { connect } from "node:net";

export interface RawResponse {
  /** Status code of the first response, or 0 when the server closed without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything received, as latin1 text. */
  raw: string;
}

/** Splits the first HTTP response out of `raw` (Content-Length bodies only; enough for our answers). */
export function parseRawResponse(raw: string): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  if (!raw.startsWith("HTTP/") || end === -1) return { status: 0, headers: {}, body: "", raw };
  const [statusLine, ...lines] = raw.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const len = headers["content-length"] !== undefined ? Number(headers["content-length"]) : raw.length - end - 4;
  const body = Buffer.from(raw.slice(end + 4), "latin1")
    .subarray(0, len)
    .toString("utf8");
  return { status: Number(statusLine!.split(" ")[1]), headers, body, raw };
}

/**
 * Sends `data` to 127.0.0.1:`port` and resolves with the first response once
 * it is complete (or the socket closes). The socket is never half-closed by
 * us, so a server that waits for more body bytes keeps waiting: a response
 * that arrives anyway proves the server answered without reading them.
 */
export function rawRequest(port: number, data: string | Uint8Array): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(parseRawResponse(Buffer.concat(chunks).toString("latin1")));
    };
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      const r = parseRawResponse(Buffer.concat(chunks).toString("latin1"));
      if (r.status && Buffer.byteLength(r.body, "utf8") >= Number(r.headers["content-length"] ?? Infinity)) finish();
    });
    socket.on("close", finish);
    socket.on("error", finish);
    socket.write(typeof data === "string" ? Buffer.from(data, "latin1") : data);
  });
}
