// What the access log needs to know about a request, filled in by whichever transport handles it.

import type { IncomingMessage } from 'node:http';

export interface RequestContext {
  readonly id: string;
  readonly start: bigint;
  transport?: 'soap11' | 'soap12' | 'get' | 'post' | 'wsdl' | 'help' | 'other';
  operation?: string;
  errorCode?: string;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

export function setContext(req: IncomingMessage, ctx: RequestContext): void {
  contexts.set(req, ctx);
}

export function contextOf(req: IncomingMessage): RequestContext | undefined {
  return contexts.get(req);
}

export function note(req: IncomingMessage, fields: Partial<Omit<RequestContext, 'id' | 'start'>>): void {
  const ctx = contexts.get(req);
  if (ctx) Object.assign(ctx, fields);
}
