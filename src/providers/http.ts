// The one HTTP client every provider fetches through (UpstreamHttp): Node's own fetch (undici),
// whose global pool keeps connections alive between calls, with the answer's size bounded while it
// is read (a longer answer is cut off and is a failure, not held in memory; so is a JSON answer
// nested deeper than MAX_JSON_DEPTH) and the caller's time
// budget as the abort signal. Redirects are not followed: an upstream that moves is a failure the
// operator sees, not a request sent on (with its key) to wherever it points.

import { UpstreamFailure, type UpstreamHttp, type UpstreamRequest, type UpstreamResponse } from './provider';

/**
 * Deepest nesting of arrays and objects an upstream's JSON may have. Real answers nest a few levels;
 * JSON.parse of text nested far deeper (under UPSTREAM_MAX_BYTES, `[[[[...` builds hundreds of
 * thousands of arrays) holds the event loop and memory, and every check after it recurses.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of JSON text fed to it in pieces (characters or UTF-8 bytes: the brackets, quotes and
 * backslashes it looks at are ASCII, never part of a multi-byte character), strings skipped, nothing built.
 */
class DepthScan {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limit: number) {}

  /** False once the text so far nests deeper than the limit. */
  feed(piece: ArrayLike<number> | string): boolean {
    const text = typeof piece === 'string';
    for (let i = 0; i < piece.length; i++) {
      const c = text ? piece.charCodeAt(i) : piece[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
      } else if (c === 0x22) this.inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (++this.depth > this.limit) return false;
      } else if (c === 0x5d || c === 0x7d) this.depth--;
    }
    return true;
  }
}

/** Whether JSON text nests arrays and objects deeper than `limit`: one pass over the text, nothing built. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  return text.length > limit && !new DepthScan(limit).feed(text);
}

/**
 * An upstream's JSON text parsed, or an Error saying why not; text nested deeper than MAX_JSON_DEPTH is refused
 * before anything is built.
 */
export function parseUpstreamJson(text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new Error(`JSON nested deeper than ${MAX_JSON_DEPTH} levels (${text.length} characters)`);
  return JSON.parse(text);
}

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

/**
 * The body as text, at most `maxBytes` of it. A body labelled JSON is refused as soon as it nests deeper than
 * MAX_JSON_DEPTH, before the rest is read.
 */
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
  const depth = /json/i.test(res.headers.get('content-type') ?? '') ? new DepthScan(MAX_JSON_DEPTH) : null;
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
    if (depth !== null && !depth.feed(value)) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamFailure('', 'permanent', `${host} answered JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
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
