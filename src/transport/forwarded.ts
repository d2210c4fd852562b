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
