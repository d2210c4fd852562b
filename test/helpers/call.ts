// Calls one operation over one of the four transports, as a plain HTTP client would.

import { envelope, soapHeaders } from './soap';

export type Transport = 'soap11' | 'soap12' | 'get' | 'post';
export const TRANSPORTS: readonly Transport[] = ['soap11', 'soap12', 'get', 'post'];

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/** One request, its answer read whole as text. */
export async function fetchAnswer(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** A SOAP envelope POSTed to /api/reg.asmx as a well-behaved client sends `operation` (Check), plus `headers`. */
export function postSoap(
  base: string,
  version: '1.1' | '1.2',
  body: string,
  headers: Record<string, string> = {},
  operation = 'Check',
): Promise<Answer> {
  return fetchAnswer(base, '/api/reg.asmx', {
    method: 'POST',
    headers: { ...soapHeaders(version, operation), ...headers },
    body,
  });
}

/** GET /api/reg.asmx/{operation} with the parameters in the query string, the answer not yet read. */
export function httpGet(base: string, operation: string, params: Record<string, string>): Promise<Response> {
  return fetch(`${base}/api/reg.asmx/${operation}?${new URLSearchParams(params).toString()}`);
}

export async function call(
  base: string,
  transport: Transport,
  operation: string,
  params: Record<string, string>,
): Promise<Answer> {
  if (transport === 'get') {
    const res = await httpGet(base, operation, params);
    return { status: res.status, headers: res.headers, body: await res.text() };
  }
  if (transport === 'post') {
    return fetchAnswer(base, `/api/reg.asmx/${operation}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
  }
  const version = transport === 'soap11' ? '1.1' : '1.2';
  return postSoap(base, version, envelope(version, operation, params), {}, operation);
}
