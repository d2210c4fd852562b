// OpenTelemetry tracing (docs/operating.md, "Tracing"), on only when OTEL_EXPORTER_OTLP_ENDPOINT is
// set. Off, nothing of the SDK is loaded (its modules are imported by startTracing alone) and the
// request path makes no span: app.ts assembles the service without the wrappers below. On, each
// lookup is a span `lookup` (its operation, transport, request id, where the answer came from and
// its outcome), and what it waited on are its children: the store read (or the read and charge of
// one statement), the charge, the upstream cache's read and write, and each call to an upstream
// provider (provider, attempt, HTTP status). Spans go to a collector another team may run, so no
// attribute holds a username, a registration, a URL or a credential, and a failure is described by
// its code or class, never by its message (which may name a host or a query).

import type { Attributes, Span } from '@opentelemetry/api';
import type { TracingConfig } from '../config';
import { ERRORS, LookupError } from '../core/errors';
import { VERSION } from './version';

export interface Tracing {
  /** Runs `fn` as a span named `name`, a child of the span active now; the span ends when `fn` settles. */
  span<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T>;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/** The span status code for an error (SpanStatusCode.ERROR), without loading the API for a constant. */
const STATUS_ERROR = 2;

/** What a failure says on its span: the error code, or the class (and an upstream failure's kind). */
function failed(span: Span, e: unknown): void {
  if (e instanceof LookupError) {
    span.setAttribute('reglookup.outcome', e.code);
    if (ERRORS[e.code].role === 'Server') span.setStatus({ code: STATUS_ERROR, message: e.code });
    return;
  }
  const name = e instanceof Error ? e.name : typeof e;
  const kind = (e as { kind?: unknown })?.kind;
  if (typeof kind === 'string') span.setAttribute('reglookup.upstream.outcome', kind);
  span.setStatus({ code: STATUS_ERROR, message: name });
}

let contextReady = false;

/** A module of the SDK, loaded when tracing starts and never before (nothing imports it at the top of a file). */
function load<T>(id: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, see above
  return require(id) as T;
}

/** Loads the SDK and starts sending traces to the collector (OTLP over HTTP, JSON). */
export function startTracing(config: TracingConfig): Tracing {
  const api = load<typeof import('@opentelemetry/api')>('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = load<typeof import('@opentelemetry/context-async-hooks')>(
    '@opentelemetry/context-async-hooks',
  );
  const sdk = load<typeof import('@opentelemetry/sdk-trace-base')>('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = load<typeof import('@opentelemetry/exporter-trace-otlp-http')>(
    '@opentelemetry/exporter-trace-otlp-http',
  );
  const { resourceFromAttributes } = load<typeof import('@opentelemetry/resources')>('@opentelemetry/resources');
  // One context manager for the process: it is what makes a store read a child of its lookup across awaits.
  if (!contextReady) contextReady = api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': VERSION }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl, headers: { ...config.headers } })),
    ],
  });
  const tracer = provider.getTracer('reglookup', VERSION);
  return {
    span(name, attributes, fn) {
      return tracer.startActiveSpan(name, { attributes }, async (span) => {
        try {
          return await fn(span);
        } catch (e) {
          failed(span, e);
          throw e;
        } finally {
          span.end();
        }
      });
    },
    shutdown: () => provider.shutdown(),
  };
}

/** What the lookup span reads of the notes a transport hands the service (its request context). */
interface LookupNotes {
  readonly id?: string;
  readonly transport?: string;
  readonly source?: string;
}

/** The service's lookups, each run as a `lookup` span (structural: the service layer sits above this one). */
export function tracedLookups<S extends { lookup(op: { readonly name: string }, ...rest: never[]): Promise<unknown> }>(
  service: S,
  tracing: Tracing,
): S {
  const inner = service.lookup.bind(service) as (op: { readonly name: string }, ...rest: unknown[]) => Promise<unknown>;
  const lookup = (op: { readonly name: string }, raw: unknown, caller: unknown, notes?: LookupNotes) => {
    const attributes: Attributes = { 'reglookup.operation': op.name };
    if (notes?.transport !== undefined) attributes['reglookup.transport'] = notes.transport;
    if (notes?.id !== undefined) attributes['reglookup.request_id'] = notes.id;
    return tracing.span('lookup', attributes, async (span) => {
      const result = await inner(op, raw, caller, notes);
      span.setAttribute('reglookup.outcome', 'ok');
      if (notes?.source !== undefined) span.setAttribute('reglookup.source', notes.source);
      return result;
    });
  };
  return new Proxy(service, {
    get: (target, name) => (name === 'lookup' ? lookup : (Reflect.get(target, name, target) as unknown)),
  });
}

/** The store calls a lookup waits on: method -> its span's name, and what its result says on the span. */
const STORE_SPANS: Readonly<Record<string, { readonly span: string; readonly result: (r: unknown) => Attributes }>> = {
  get: { span: 'store.read', result: (r) => ({ 'reglookup.found': r !== null }) },
  chargeFound: {
    span: 'store.read_and_charge',
    result: (r) => {
      const fc = r as { found: unknown; charge: { ok: boolean } | null };
      return { 'reglookup.found': fc.found !== null, 'reglookup.charged': fc.charge?.ok === true };
    },
  },
  charge: { span: 'charge', result: (r) => ({ 'reglookup.charged': (r as { ok: boolean }).ok }) },
  cacheGet: { span: 'cache.read', result: (r) => ({ 'reglookup.cache.held': r !== null }) },
  cachePut: { span: 'cache.write', result: () => ({}) },
};

/**
 * The store, with the calls of STORE_SPANS each run as a span. Every other member is the store's own,
 * called on the store itself (as app.ts's timedReads does), so that state kept on `this` is one.
 */
export function tracedStore<S extends object>(store: S, tracing: Tracing, engine: string): S {
  const wrapped = new Map<PropertyKey, unknown>();
  for (const [method, what] of Object.entries(STORE_SPANS)) {
    const fn = Reflect.get(store, method, store) as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (typeof fn !== 'function') continue;
    wrapped.set(method, (...args: unknown[]) =>
      tracing.span(what.span, { 'db.system': engine }, async (span) => {
        const r = await fn.apply(store, args);
        span.setAttributes(what.result(r));
        return r;
      }),
    );
  }
  // The charge is the account store's (store.accounts), traced the same way.
  const accounts: unknown = Reflect.get(store, 'accounts', store);
  if (typeof accounts === 'object' && accounts !== null)
    wrapped.set('accounts', tracedStore(accounts, tracing, engine));
  return new Proxy(store, {
    get(target, name) {
      if (wrapped.has(name)) return wrapped.get(name);
      const v: unknown = Reflect.get(target, name, target);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The part of an upstream provider a span needs (structural: the providers sit above this layer). */
interface TraceableProvider {
  readonly name: string;
  fetch(operation: string, registration: string, state: string, ctx: never): Promise<{ readonly found: boolean }>;
}

interface TraceableContext {
  readonly http: (request: never, signal: AbortSignal) => Promise<{ readonly status: number }>;
  /** Which try of this call it is (1, then 2 and 3 for retries), as the chain's retry policy counts. */
  readonly attempt?: number;
}

/** A provider whose every call is an `upstream.call` span: provider, operation, attempt, HTTP status, outcome. */
export function tracedProvider<P extends TraceableProvider>(provider: P, tracing: Tracing): P {
  const inner = provider.fetch.bind(provider) as (
    op: string,
    reg: string,
    state: string,
    ctx: TraceableContext,
  ) => Promise<{ readonly found: boolean }>;
  const fetch = (operation: string, registration: string, state: string, ctx: TraceableContext) =>
    tracing.span(
      'upstream.call',
      {
        'reglookup.provider': provider.name,
        'reglookup.operation': operation,
        'reglookup.upstream.attempt': ctx.attempt ?? 1,
      },
      async (span) => {
        // The last HTTP status the provider saw (DVSA asks its token endpoint first, when it needs a token).
        const http: TraceableContext['http'] = (request, signal) =>
          ctx.http(request, signal).then((res) => {
            span.setAttribute('http.response.status_code', res.status);
            return res;
          });
        const answer = await inner(operation, registration, state, { ...ctx, http });
        span.setAttribute('reglookup.upstream.outcome', answer.found ? 'found' : 'not_found');
        return answer;
      },
    );
  return new Proxy(provider, {
    get(target, name) {
      if (name === 'fetch') return fetch;
      const v: unknown = Reflect.get(target, name, target);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
}
