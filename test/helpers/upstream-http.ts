// A plain UpstreamHttp on Node's fetch, for testing providers against the local fake upstreams
// directly (the service's own bounded client is not what these tests are about).

import type { FetchContext, UpstreamHttp } from '../../src/providers/provider';

export const fetchHttp: UpstreamHttp = async (request, signal) => {
  const res = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal,
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
  return { status: res.status, headers, body: await res.text() };
};

export function fetchContext(timeoutMs = 10_000): FetchContext {
  return { http: fetchHttp, signal: AbortSignal.timeout(timeoutMs) };
}
