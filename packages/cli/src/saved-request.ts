import { UsageError } from "./exit-codes";

/**
 * A webhook delivery saved to disk, for `svc webhooks verify`.
 *
 * The request file is the HTTP request as received: an optional request line
 * (`POST /hooks HTTP/1.1`), header lines (`Name: value`), one blank line (LF or
 * CRLF), then the raw body, byte for byte. When a `Content-Length` header is
 * present, exactly that many bytes are the body (an editor's final newline after
 * it is ignored). `nc -l 8000 > request.txt`, a proxy's "save raw request", or a
 * handler that writes `headers` and the raw body produce it.
 *
 * A headers file (`--headers`) is either such header lines or a JSON object
 * (`{"webhook-id": "…", …}`, as Node's `req.headers` serialises).
 */
export type SavedRequest = { headers: Record<string, string>; body: Buffer };

const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/\d(\.\d)?$/;

export function parseRequestFile(bytes: Buffer, name: string): SavedRequest {
  const crlf = bytes.indexOf("\r\n\r\n");
  const lf = bytes.indexOf("\n\n");
  let end: number;
  let sep: number;
  if (crlf >= 0 && (lf < 0 || crlf < lf)) [end, sep] = [crlf, 4];
  else if (lf >= 0) [end, sep] = [lf, 2];
  else throw new UsageError(`${name}: no blank line between the headers and the body (expected headers, an empty line, then the raw body).`);
  const headers = parseHeaderLines(bytes.subarray(0, end).toString("utf8"), name, true);
  let body = bytes.subarray(end + sep);
  const length = headers["content-length"];
  if (length !== undefined) {
    const n = Number(length);
    if (!/^\d+$/.test(length) || n > body.length) throw new UsageError(`${name}: Content-Length is ${length} but ${body.length} bytes follow the headers.`);
    body = body.subarray(0, n);
  }
  return { headers, body };
}

export function parseHeadersFile(bytes: Buffer, name: string): Record<string, string> {
  const text = bytes.toString("utf8");
  if (text.trim().startsWith("{")) {
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch {
      throw new UsageError(`${name}: not valid JSON.`);
    }
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) throw new UsageError(`${name}: expected a JSON object of headers.`);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj)) {
      if (typeof v === "string") out[k.toLowerCase()] = v;
      else if (Array.isArray(v)) out[k.toLowerCase()] = v.map(String).join(" ");
    }
    return out;
  }
  return parseHeaderLines(text, name, false);
}

function parseHeaderLines(text: string, name: string, allowRequestLine: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    if (i === 0 && allowRequestLine && REQUEST_LINE.test(line.trim())) return;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new UsageError(`${name}: line ${i + 1} is not a "Name: value" header.`);
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // Repeated headers are joined as HTTP does; webhook-signature entries are space-separated.
    out[key] = out[key] === undefined ? value : `${out[key]} ${value}`;
  });
  return out;
}
