// Calls the JSON API as a plain client would (README, JSON API): the registration and the state as
// path segments, the username by HTTP Basic authentication, Model as a query parameter.

import { call, type Answer, type Transport } from './call';

export type AnyTransport = Transport | 'json';
/** The five transports of the README: SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST and the JSON API. */
export const FIVE_TRANSPORTS: readonly AnyTransport[] = ['soap11', 'soap12', 'get', 'post', 'json'];

export function basic(username: string, password = 'x'): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** GET /api/json.aspx/{operation}/{RegistrationNumber}[/{state}][?Model=]; username by Basic auth unless `noAuth`. */
export async function callJson(
  base: string,
  operation: string,
  params: Record<string, string>,
  init: RequestInit & { noAuth?: boolean } = {},
): Promise<Answer> {
  const state = params.State ?? params.state;
  let path = `/api/json.aspx/${operation}/${encodeURIComponent(params.RegistrationNumber ?? '')}`;
  if (state !== undefined) path += `/${encodeURIComponent(state)}`;
  if (params.Model !== undefined) path += `?Model=${encodeURIComponent(params.Model)}`;
  const headers = new Headers(init.headers);
  if (!init.noAuth && params.username !== undefined) headers.set('Authorization', basic(params.username));
  const res = await fetch(base + path, { ...init, headers });
  return { status: res.status, headers: res.headers, body: init.method === 'HEAD' ? '' : await res.text() };
}

/** One operation over any of the five transports. */
export function callAny(
  base: string,
  t: AnyTransport,
  operation: string,
  params: Record<string, string>,
): Promise<Answer> {
  return t === 'json' ? callJson(base, operation, params) : call(base, t, operation, params);
}
