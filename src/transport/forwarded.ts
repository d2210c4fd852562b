// Who is calling, and at what address the caller sees us, when proxies stand in between. Headers a
// proxy adds are believed only from the proxies TRUST_PROXY names: anyone else can send them.

import type { IncomingMessage } from 'node:http';
import type { TrustedProxies } from '../config';
import type { Caller } from '../service/lookup';

/**
 * The client's address: the socket's, or, when the socket is a trusted proxy, the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy (the left-most hops are the client's own
 * claims and can be forged).
 */
export function clientAddress(req: IncomingMessage, trust: TrustedProxies): string {
  const socket = req.socket.remoteAddress ?? '';
  if (trust.list.length === 0 || !trust.has(socket)) return socket;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = withoutPort(hops[i]);
    if (!trust.has(hop)) return hop;
  }
  return hops.length > 0 ? withoutPort(hops[0]) : socket;
}

/** Some proxies write a hop with its port (1.2.3.4:5678, [2001:db8::1]:5678): the address alone. */
function withoutPort(hop: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (v6) return v6[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(hop);
  return v4 ? v4[1] : hop;
}

/** The caller a transport hands to LookupService.lookup. */
export function callerOf(req: IncomingMessage, trust: TrustedProxies): Caller {
  return { address: clientAddress(req, trust) };
}

// A plain host: a DNS name or IPv4 address, or an IPv6 address in brackets; then an optional port.
const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251})|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/;
/** A path prefix: segments of unreserved characters, e.g. /reg or /api/v1; no `.` or `..` segment. */
const PREFIX_RE = /^(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~-]{1,64}){1,8}\/?$/;

/**
 * The host when it is a plain host with, optionally, a port from 1 to 65535 (what a URL can hold),
 * normalised as a URL writes it (`:80` dropped, names in lower case); null for anything else.
 */
export function plainHost(host: string | undefined): string | null {
  if (host === undefined) return null;
  const m = HOST_RE.exec(host);
  if (!m) return null;
  if (m[1] !== undefined) {
    const port = Number(m[1]);
    if (port < 1 || port > 65535) return null;
  }
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return null;
  }
}

/** The first value of a header that a chain of proxies may have extended with commas. */
function first(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return undefined;
  const comma = s.indexOf(',');
  return (comma === -1 ? s : s.slice(0, comma)).trim();
}

/**
 * The base URL at which the caller reached the service (scheme, host and any path prefix before
 * /api/reg.asmx), for the WSDL's addresses, the DISCO document, the help pages' links and the
 * OpenAPI document's server: PUBLIC_URL when set; otherwise, from a trusted proxy,
 * X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix; otherwise the Host header over plain
 * HTTP. A host (forwarded or not) that is not a plain host (plainHost) is never written: a
 * forwarded one that is not falls back to the Host header, and a Host that is not to the address
 * the request came in on. A forwarded scheme or prefix that is not plain is ignored likewise.
 */
export function publicBase(req: IncomingMessage, trust: TrustedProxies, publicUrl: string | null): string {
  if (publicUrl) return publicUrl;
  let scheme = 'http';
  let host = plainHost(req.headers.host);
  let prefix = '';
  if (trust.list.length > 0 && trust.has(req.socket.remoteAddress ?? '')) {
    const proto = first(req, 'x-forwarded-proto')?.toLowerCase();
    if (proto === 'http' || proto === 'https') scheme = proto;
    const fwdHost = plainHost(first(req, 'x-forwarded-host'));
    if (fwdHost !== null) host = fwdHost;
    const fwdPrefix = first(req, 'x-forwarded-prefix');
    if (fwdPrefix !== undefined && PREFIX_RE.test(fwdPrefix)) prefix = fwdPrefix.replace(/\/$/, '');
  }
  if (host !== null) return `${scheme}://${host}${prefix}`;
  const addr = req.socket.localAddress ?? '127.0.0.1';
  return `${scheme}://${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort ?? 80}${prefix}`;
}
