// Calls one operation over one of the four transports, as a plain HTTP client would.

import { envelope, soapHeaders } from './soap';

export type Transport = 'soap11' | 'soap12' | 'get' | 'post';
export const TRANSPORTS: readonly Transport[] = ['soap11', 'soap12', 'get', 'post'];

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export async function call(
  base: string,
  transport: Transport,
  operation: string,
  params: Record<string, string>,
): Promise<Answer> {
  let res: Response;
  if (transport === 'get') {
    res = await fetch(`${base}/api/reg.asmx/${operation}?${new URLSearchParams(params)}`);
  } else if (transport === 'post') {
    res = await fetch(`${base}/api/reg.asmx/${operation}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
  } else {
    const version = transport === 'soap11' ? '1.1' : '1.2';
    res = await fetch(`${base}/api/reg.asmx`, {
      method: 'POST',
      headers: soapHeaders(version, operation),
      body: envelope(version, operation, params),
    });
  }
  return { status: res.status, headers: res.headers, body: await res.text() };
}
