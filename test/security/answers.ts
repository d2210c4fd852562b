// What a caller may be answered, checked the way a caller reads it: a SOAP fault with our ErrorCode,
// a one-line text/plain error with X-Error-Code, or a result; and never a trace of our insides.

import { parseStringPromise } from 'xml2js';
import { documentedErrors } from '../helpers/readme';
import { NS, SOAP11, SOAP12 } from '../helpers/soap';

// What each code must look like is the README's error table, not the code's own.
const DOCUMENTED = documentedErrors();

export interface Seen {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

export function fromFetch(res: Response, text: string): Seen {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
  return { status: res.status, headers, text };
}

// A stack frame, a source or install path, an engine error name, node-soap's own parse fault, or
// database text: none may reach a caller, whatever they sent.
const LEAKS: ReadonlyArray<[string, RegExp]> = [
  ['stack frame', /\bat (?:[\w$.<>[\] ]+ )?\(?(?:\/|node:|file:)[^\s)]*:\d+:\d+\)?/],
  ['source path', /(?:\/work\/|\/home\/|\/usr\/|\/tmp\/|node_modules|\b[A-Za-z]:\\[\w.-]+\\)/],
  ['source file', /\b[\w-]+\.(?:ts|js):\d+/],
  [
    'engine error',
    /\b(?:TypeError|ReferenceError|RangeError|SyntaxError)\b|Cannot read propert|is not a function|is not iterable|Maximum call stack/,
  ],
  ['node-soap fault', /Invalid XML|Line: \d+\s*(?:&#xA;|\n)?\s*Column:|wssecurity|u:Timestamp/],
  ['database text', /SQLITE_|no such (?:table|column)|better-sqlite3|\bSELECT\b[^<'\n]{0,80}\bFROM\b/i],
];

/** The name of the first leak found in a response body, or null. */
export function leakIn(text: string): string | null {
  for (const [name, re] of LEAKS) if (re.test(text)) return `${name}: ${re.exec(text)?.[0]}`;
  return null;
}

export function faultCodeOf(text: string): string | null {
  return /<ErrorCode xmlns="http:\/\/regcheck\.org\.uk">([A-Z_]+)<\/ErrorCode>/.exec(text)?.[1] ?? null;
}

/**
 * Why this is not a proper SOAP fault of our error table for that version, or null when it is:
 * the README's SOAP status for it, the version's content type, a well-formed envelope in the
 * version's namespace, the README's faultcode or Code/Value for it, and <ErrorCode> in our namespace.
 */
export async function soapFaultProblem(seen: Seen, version: '1.1' | '1.2'): Promise<string | null> {
  const code = faultCodeOf(seen.text);
  const spec = code === null ? undefined : DOCUMENTED.get(code);
  if (!code || !spec) return `no ErrorCode of ours in: ${seen.text.slice(0, 300)}`;
  const wantStatus = spec.soapStatus;
  if (seen.status !== wantStatus) return `${code} came with status ${seen.status}, not ${wantStatus}`;
  const type = (seen.headers['content-type'] ?? '').split(';')[0].trim();
  const wantType = version === '1.1' ? 'text/xml' : 'application/soap+xml';
  if (type !== wantType) return `content type ${type}, not ${wantType}`;
  let doc: Record<string, unknown>;
  try {
    doc = (await parseStringPromise(seen.text, {
      explicitArray: false,
      tagNameProcessors: [(n: string) => n.replace(/^.*:/, '')],
      xmlns: true,
    })) as Record<string, unknown>;
  } catch (e) {
    return `the fault is not well-formed XML: ${(e as Error).message.split('\n')[0]}`;
  }
  const env = doc.Envelope as { $ns?: { uri?: string } } | undefined;
  const wantNs = version === '1.1' ? SOAP11 : SOAP12;
  if (!env || env.$ns?.uri !== wantNs) return `the envelope is not in ${wantNs}`;
  const role = version === '1.1' ? spec.faultcode11 : spec.code12;
  const given =
    version === '1.1'
      ? /<faultcode>([^<]*)<\/faultcode>/.exec(seen.text)?.[1]
      : /<soap:Code><soap:Value>([^<]*)<\/soap:Value>/.exec(seen.text)?.[1];
  if (given !== role) return `${code} has fault code ${given}, not ${role}`;
  if (!seen.text.includes(`<ErrorCode xmlns="${NS}">`)) return 'ErrorCode is not in the service namespace';
  return null;
}

/**
 * Why this is not a proper plain error of our table (one text/plain line, X-Error-Code, the table's status), or null.
 */
export function plainErrorProblem(seen: Seen): string | null {
  const code = seen.headers['x-error-code'];
  const spec = code === undefined ? undefined : DOCUMENTED.get(code);
  if (!code || !spec) return `no X-Error-Code of ours (status ${seen.status}): ${seen.text.slice(0, 200)}`;
  if (seen.status !== spec.status) return `${code} came with status ${seen.status}, not ${spec.status}`;
  if (!/^text\/plain\b/.test(seen.headers['content-type'] ?? '')) return `content type ${seen.headers['content-type']}`;
  if (!seen.text.startsWith(`${code}: `)) return `the body does not start with '${code}: '`;
  if (seen.text.replace(/\n$/, '').includes('\n')) return 'the body is more than one line';
  return null;
}
