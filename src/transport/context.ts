// What the access log needs to know about a request, filled in by whichever transport handles it.

import type { IncomingMessage } from 'node:http';

export interface RequestContext {
  readonly id: string;
  /** performance.now() when the request reached the front handler. */
  readonly start: number;
  transport?:
    | 'soap11'
    | 'soap12'
    | 'get'
    | 'post'
    | 'json'
    | 'wsdl'
    | 'help'
    | 'health'
    | 'metrics'
    | 'credits'
    | 'batch'
    | 'other';
  operation?: string;
  /** The caller's username, once a transport has decoded it; the access log writes only its fingerprint. */
  username?: string;
  /** The name of the caller's account, once admission found it (the access log's `account`). */
  account?: string;
  errorCode?: string;
  /** Set when the answer came from a sandbox registration (SANDBOX=on), for the access log. */
  sandbox?: boolean;
  /** Where the answer came from (store, cache, dvla, ...), for the access log. */
  source?: string;
  /** The caller's connection: a charge is not kept once it is destroyed (store.ts, ChargeCaller). */
  readonly socket?: { readonly destroyed: boolean };
}

// Kept on the request itself under a private symbol rather than in a WeakMap: every request has
// one, and a WeakMap holding one entry per request in flight adds to every young-generation GC.
const CONTEXT = Symbol('reglookup.requestContext');
type WithContext = IncomingMessage & { [CONTEXT]?: RequestContext };

export function setContext(req: IncomingMessage, ctx: RequestContext): void {
  (req as WithContext)[CONTEXT] = ctx;
}

export function contextOf(req: IncomingMessage): RequestContext | undefined {
  return (req as WithContext)[CONTEXT];
}

export function note(req: IncomingMessage, fields: Partial<Omit<RequestContext, 'id' | 'start'>>): void {
  const ctx = (req as WithContext)[CONTEXT];
  if (ctx) Object.assign(ctx, fields);
}

/**
 * Notes the username a transport decoded, for the access log's fingerprint: the raw parameter as
 * given (a string, the first of repeated values, or a SOAP element's text), whole, so that the
 * fingerprint is the one `reglookup users fingerprint` prints. The service validates it separately.
 */
export function noteUsername(req: IncomingMessage, raw: unknown): void {
  const ctx = (req as WithContext)[CONTEXT];
  if (!ctx) return;
  let v: unknown = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
  if (v !== null && typeof v === 'object') v = (v as Record<string, unknown>).$value;
  if (typeof v === 'string' || typeof v === 'number') {
    ctx.username = String(v);
  }
}
