// Who is calling, and at what address the caller sees us, when proxies stand in between. Headers a
// proxy adds are believed only from the proxies TRUST_PROXY names: anyone else can send them.

import type { IncomingMessage } from 'node:http';
import type { TrustedProxies } from '../config';

/**
 * The client's address: the socket's, or, when the socket is a trusted proxy, the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy (the left-most hops are the client's own
 * claims and can be forged).
 */
export function clientAddress(req: IncomingMessage, trust: TrustedProxies): string {
  const socket = req.socket.remoteAddress ?? '';
  if (trust.list.length === 0 || !trust.has(socket)) return socket;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : header ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trust.has(hops[i])) return hops[i];
  }
  return hops[0] ?? socket;
}

/** A plain host name, IPv4 address or bracketed IPv6 address, with an optional port. */
export const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
/** A path prefix: segments of unreserved characters, e.g. /reg or /api/v1; no `.` or `..` segment. */
const PREFIX_RE = /^(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._~-]{1,64}){1,8}\/?$/;

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
 * /api/reg.asmx), for the WSDL's addresses and the help pages' links:
 * PUBLIC_URL when set; otherwise, from a trusted proxy, X-Forwarded-Proto, X-Forwarded-Host and
 * X-Forwarded-Prefix; otherwise the Host header over plain HTTP. A forwarded value that is not a
 * plain scheme, host or path prefix is ignored (the one it would have replaced is used), so a
 * header can never put markup or another path into the WSDL.
 */
export function publicBase(req: IncomingMessage, trust: TrustedProxies, publicUrl: string | null): string {
  if (publicUrl) return publicUrl;
  let scheme = 'http';
  let host = req.headers.host;
  let prefix = '';
  if (trust.list.length > 0 && trust.has(req.socket.remoteAddress ?? '')) {
    const proto = first(req, 'x-forwarded-proto')?.toLowerCase();
    if (proto === 'http' || proto === 'https') scheme = proto;
    const fwdHost = first(req, 'x-forwarded-host');
    if (fwdHost !== undefined && HOST_RE.test(fwdHost)) host = fwdHost;
    const fwdPrefix = first(req, 'x-forwarded-prefix');
    if (fwdPrefix !== undefined && PREFIX_RE.test(fwdPrefix)) prefix = fwdPrefix.replace(/\/$/, '');
  }
  if (host && HOST_RE.test(host)) return `${scheme}://${host}${prefix}`;
  const addr = req.socket.localAddress ?? '127.0.0.1';
  return `${scheme}://${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort ?? 80}${prefix}`;
}
