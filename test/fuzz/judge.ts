// Sends a fuzz request over a keep-alive connection and judges the answer: a result, a proper fault,
// or a 4xx of our error table; never silence, a reset, a 5xx other than a SOAP fault, or a leak.

import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { WSDL_FILE } from '../helpers/contract';
import { documentedErrors } from '../helpers/readme';
import { leakIn, plainErrorProblem, soapFaultProblem, type Seen } from '../security/answers';
import type { FuzzRequest } from './cases';

export interface FuzzAnswer extends Seen {
  /** Set when no HTTP answer arrived: the socket error or 'timeout'. */
  readonly failure?: string;
  readonly ms: number;
}

/** One keep-alive connection at a time, as a client would; sockets the server closes are replaced. */
export class FuzzClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(
    private readonly port: number,
    private readonly timeoutMs = 5000,
  ) {}

  send(r: FuzzRequest): Promise<FuzzAnswer> {
    return new Promise((resolve) => {
      const t0 = Date.now();
      let settled = false;
      const done = (a: Omit<FuzzAnswer, 'ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...a, ms: Date.now() - t0 });
      };
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: r.method,
          path: r.path,
          agent: this.agent,
          headers: { ...r.headers, 'Content-Length': String(r.body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers))
              if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
            done({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (e) =>
            done({
              status: 0,
              headers: {},
              text: '',
              failure: `response ${String((e as NodeJS.ErrnoException).code ?? e)}`,
            }),
          );
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        done({ status: 0, headers: {}, text: '', failure: `no answer within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
      req.on('error', (e) =>
        done({
          status: 0,
          headers: {},
          text: '',
          failure: `request ${String((e as NodeJS.ErrnoException).code ?? e.message)}`,
        }),
      );
      req.end(r.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function soapVersionOf(contentType: string | undefined): '1.1' | '1.2' | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'text/xml' ? '1.1' : type === 'application/soap+xml' ? '1.2' : null;
}

const RESULT_ROOT = /^<\?xml version="1\.0" encoding="utf-8"\?>\r\n<(\w+) xmlns:xsi=/;
const DOCUMENTED = documentedErrors();

// Each operation's result type as the WSDL declares it ({Op}Response holds {Op}Result of that type).
const WSDL_TEXT = fs.readFileSync(WSDL_FILE, 'utf8');
const RESULT_TYPES = new Map<string, string>(
  [
    ...WSDL_TEXT.matchAll(
      /<s:element name="(\w+)Response">\s*<s:complexType>\s*<s:sequence>\s*<s:element [^>]*name="\1Result" type="tns:(\w+)"/g,
    ),
  ].map((m) => [m[1], m[2]]),
);

/** The operation a SOAP request's body names (its first element in the Body), or null when it cannot be read. */
function soapOperationAsked(r: FuzzRequest): string | null {
  let body: Buffer;
  try {
    const coding = (r.headers['Content-Encoding'] ?? '').toLowerCase();
    body = coding === 'gzip' ? zlib.gunzipSync(r.body) : coding === 'deflate' ? zlib.inflateSync(r.body) : r.body;
  } catch {
    return null;
  }
  const text = body.toString('utf8');
  const open = /<(?:[\w.-]+:)?Body\b[^>]*>/.exec(text);
  if (!open) return null;
  const after = text.slice(open.index + open[0].length).replace(/<!--[\s\S]*?-->/g, '');
  return /^\s*<(?:[\w.-]+:)?([\w.-]+)/.exec(after)?.[1] ?? null;
}

/** The operation an HTTP GET/POST path names (/api/reg.asmx/{Op}), or null when it is not a lookup path. */
function httpOperationAsked(r: FuzzRequest): string | null {
  const m = /^\/api\/reg\.asmx\/([^/?]+)\/?(?:\?|$)/i.exec(r.path);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/** Why this answer is not acceptable for this request, or null when it is. */
export async function judge(r: FuzzRequest, a: FuzzAnswer): Promise<string | null> {
  if (a.failure) {
    // A body refused as too large may be cut off rather than drained; the answer was sent first.
    if (r.body.length > 65_536 + 256 * 1024) return null;
    return a.failure;
  }
  const leak = leakIn(a.text);
  if (leak) return `leak (${leak}) in status ${a.status}: ${a.text.slice(0, 300)}`;
  // As the front handler routes: POST to the SOAP path, in any case, with or without trailing slashes.
  const onSoapPath = r.method === 'POST' && r.path.split('?')[0].replace(/\/+$/, '').toLowerCase() === '/api/reg.asmx';
  const version = soapVersionOf(r.headers['Content-Type']);

  if (a.status >= 500) {
    if (!onSoapPath || !version) return `status ${a.status} outside a SOAP fault: ${a.text.slice(0, 300)}`;
    const problem = await soapFaultProblem(a, version);
    if (problem) return `status ${a.status}: ${problem}`;
    const code = /<ErrorCode [^>]*>([A-Z_]+)</.exec(a.text)?.[1];
    if (code === 'INTERNAL_ERROR') return `INTERNAL_ERROR fault: ${a.text.slice(0, 300)}`;
    return null;
  }
  if (a.status >= 400) {
    if (onSoapPath && version && a.status === 413) return soapFaultProblem(a, version);
    // README, Help pages: an unknown ?op= on the service page is a 404 page (HTML), not an error line.
    const onServicePage =
      (r.method === 'GET' || r.method === 'HEAD') &&
      r.path.split('?')[0].replace(/\/+$/, '').toLowerCase() === '/api/reg.asmx';
    if (
      a.status === 404 &&
      onServicePage &&
      /^text\/html/.test(a.headers['content-type'] ?? '') &&
      (r.method === 'HEAD' ? a.text === '' : a.text.startsWith('<!DOCTYPE html>'))
    )
      return null;
    // Node's HTTP parser answers a request head over its 16 KiB limit itself, before any handler.
    if (a.status === 431 && r.path.length > 16 * 1024 - 256) return null;
    if (r.method === 'HEAD') {
      const code = a.headers['x-error-code'];
      if (a.text !== '') return 'a body in the answer to HEAD';
      return code && DOCUMENTED.get(code)?.status === a.status
        ? null
        : `HEAD answered ${a.status} with X-Error-Code ${code}`;
    }
    const problem = plainErrorProblem(a);
    if (problem) return `status ${a.status}: ${problem}`;
    return null;
  }
  if (a.status === 200) {
    if (onSoapPath) {
      if (!version) return 'a SOAP result for a request that was not SOAP';
      const op = /<soap:Body><(\w+)Response xmlns="http:\/\/regcheck\.org\.uk"/.exec(a.text)?.[1];
      if (!op || !a.text.includes(`<${op}Result>`) || !a.text.endsWith('</soap:Body></soap:Envelope>'))
        return `200 without a SOAP result: ${a.text.slice(0, 300)}`;
      if (soapVersionOf(a.headers['content-type']) !== version)
        return `SOAP ${version} request answered as ${a.headers['content-type']}`;
      const asked = soapOperationAsked(r);
      if (asked !== null && asked !== op) return `asked for ${asked}, answered with a ${op} result`;
      return null;
    }
    const asked = httpOperationAsked(r);
    if (asked !== null) {
      // A lookup path answers the result of the very operation it names (names are case-sensitive), never a page.
      const type = RESULT_TYPES.get(asked);
      if (!type) return `200 on ${r.path.slice(0, 100)}, which names no operation`;
      if (r.method === 'HEAD') return null;
      const root = RESULT_ROOT.exec(a.text)?.[1];
      return root === type
        ? null
        : `${asked} answered with ${root ? `a ${root}` : 'no result'} instead of a ${type}: ${a.text.slice(0, 200)}`;
    }
    if (r.method === 'HEAD') return null;
    if (/^text\/html/.test(a.headers['content-type'] ?? '') && a.text.startsWith('<!DOCTYPE html>')) return null;
    return `200 without a result: ${a.text.slice(0, 300)}`;
  }
  return `unexpected status ${a.status}: ${a.text.slice(0, 300)}`;
}
