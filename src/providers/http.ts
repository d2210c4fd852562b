// The one HTTP client every provider fetches through (UpstreamHttp): Node's own fetch (undici),
// whose global pool keeps connections alive between calls, with the answer's size bounded while it
// is read (a longer answer is cut off and is a failure, not held in memory) and the caller's time
// budget as the abort signal. Redirects are not followed: an upstream that moves is a failure the
// operator sees, not a request sent on (with its key) to wherever it points.

import { UpstreamFailure, type UpstreamHttp, type UpstreamRequest, type UpstreamResponse } from './provider';

/**
 * What a network failure is called in a message: its code (ECONNREFUSED, ...) or the abort. Never the URL (it may carry
 * a key).
 */
function reasonOf(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer within the time allowed';
  const cause = (e as { cause?: { code?: string } })?.cause;
  return cause?.code ?? (e as Error)?.name ?? 'network error';
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the upstream';
  }
}

async function readBounded(res: Response, maxBytes: number, host: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new UpstreamFailure(
      '',
      'permanent',
      `${host} answered ${declared} bytes, over the ${maxBytes} allowed (UPSTREAM_MAX_BYTES)`,
    );
  }
  if (!res.body) return '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamFailure(
        '',
        'permanent',
        `${host} answered more than the ${maxBytes} bytes allowed (UPSTREAM_MAX_BYTES)`,
      );
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
}

/** An UpstreamHttp reading at most `maxBytes` of any answer. */
export function upstreamHttp(maxBytes: number): UpstreamHttp {
  return async (request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> => {
    const host = hostOf(request.url);
    let res: Response;
    try {
      res = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal,
        redirect: 'manual',
        keepalive: true,
      });
    } catch (e) {
      throw new UpstreamFailure('', 'transient', `${host} could not be reached: ${reasonOf(e, signal)}`);
    }
    let body: string;
    try {
      body = await readBounded(res, maxBytes, host);
    } catch (e) {
      if (e instanceof UpstreamFailure) throw e;
      throw new UpstreamFailure('', 'transient', `${host} broke off its answer: ${reasonOf(e, signal)}`);
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    return { status: res.status, headers, body };
  };
}
