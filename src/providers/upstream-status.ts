// What an upstream's HTTP status means for the chain (provider.ts FailureKind), shared by the
// providers of this folder: 429 and 5xx are worth retrying (with the upstream's Retry-After),
// refused credentials and anything unexpected are not. Messages name the upstream and the status,
// never a URL, a header or a body (they may carry a key).

import { MAX_JSON_DEPTH, nestsDeeperThan } from './http';
import { UpstreamFailure } from './provider';

/** Seconds from a Retry-After header (seconds or an HTTP date), or undefined; at most a day. */
export function retryAfterOf(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,9}$/.test(v)) return Math.min(Number(v), 86_400);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, Math.ceil((at - now) / 1000)), 86_400);
}

/** The failure an unexpected status is. */
export function failureForStatus(
  provider: string,
  status: number,
  headers: Readonly<Record<string, string>>,
  what: string,
): UpstreamFailure {
  const retryAfter = retryAfterOf(headers['retry-after']);
  if (status === 429)
    return new UpstreamFailure(
      provider,
      'transient',
      `${what} refused the call for now (429, too many requests)`,
      retryAfter,
    );
  if (status === 401 || status === 403)
    return new UpstreamFailure(provider, 'permanent', `${what} refused our credentials (${status}); check the key`);
  if (status >= 500) return new UpstreamFailure(provider, 'transient', `${what} failed (${status})`, retryAfter);
  return new UpstreamFailure(provider, 'permanent', `${what} answered an unexpected status ${status}`);
}

/**
 * The body as JSON, or a permanent failure naming the upstream (never quoting the body); a body nested deeper than
 * MAX_JSON_DEPTH is refused before it is parsed.
 */
export function jsonBody(provider: string, what: string, body: string): unknown {
  if (nestsDeeperThan(body, MAX_JSON_DEPTH))
    throw new UpstreamFailure(
      provider,
      'permanent',
      `${what} answered JSON nested deeper than ${MAX_JSON_DEPTH} levels (${body.length} characters)`,
    );
  try {
    return JSON.parse(body);
  } catch {
    throw new UpstreamFailure(provider, 'permanent', `${what} answered something that is not JSON`);
  }
}
