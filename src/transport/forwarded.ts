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
  const hops = (Array.isArray(header) ? header.join(',') : header ?? '')
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
