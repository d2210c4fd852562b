// Assembles the service. The order in which a request meets things is read here, once:
//   front handler (request id, access log), then, with the other requests of the same event-loop
//   turn, in that turn's check phase (transport/turn.ts):
//     POST /api/reg.asmx            -> SOAP transport (body limit, XML guard; node-soap unless the envelope is plain)
//     GET/POST /api/reg.asmx/{Op}   -> HTTP GET/POST lookup (when no body limit applies; else through Express)
//     everything else               -> Express: GET/POST /api/reg.asmx/{Op}, the JSON API at
//                                      /api/json.aspx, /ajax/getcredits.aspx, /image.aspx, WSDL and help, health
// and every transport calls the one LookupService, which asks the accounts and the store. The
// transport writes the answer from the record's payload (transport/answers.ts).

import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Accounts } from './accounts/accounts';
import { FlexibleRateLimiter } from './accounts/limiter';
import { UsageRecorder } from './accounts/usage';
import type { Config } from './config';
import { assertContract, loadWsdl, SOAP_PATH } from './contract/wsdl';
import { fingerprint } from './ops/fingerprint';
import { readiness, type ReadinessProbe } from './ops/health';
import { createLogger, logAccess, type Logger } from './ops/logger';
import { storeWatcher, type StoreHealth } from './ops/storewatch';
import { startTracing, tracedLookups, tracedStore, type Tracing } from './ops/tracing';
import {
  askPrimaryForMetrics,
  CONTENT_TYPE as METRICS_CONTENT_TYPE,
  metrics as processMetrics,
  type Metrics,
} from './ops/metrics';
import { VERSION } from './ops/version';
import { stackOf } from './core/errors';
import { LookupError } from './service/errors';
import { CreditsService } from './service/credits';
import { LookupService } from './service/lookup';
import { upstreamChain, type UpstreamSetup } from './service/upstream-setup';
import { importFile } from './data/import';
import type { VehicleStore } from './store/store';
import { contextOf, note, setContext } from './transport/context';
import { creditsRouter } from './transport/credits';
import { clientAddress } from './transport/forwarded';
import { helpRouter } from './transport/help';
import { directHttpLookup, httpHandler } from './transport/http';
import { imageHandler } from './transport/image';
import { jsonHandler } from './transport/json';
import { batchRouter, isBatchPath } from './transport/batch';
import { batchBodyLimit } from './service/batch-input';
import { BatchRunner } from './service/batch';
import { sendPlainError } from './transport/plain';
import { createSoapHandler } from './transport/soap';
import { servedTogether } from './transport/turn';

export const SAMPLE_FILE = path.resolve(__dirname, '..', 'data', 'sample.ndjson');

export interface Service {
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  readonly store: VehicleStore;
  readonly logger: Logger;
  /** Batch jobs (POST /api/batch), for the admin console to submit one for a caller in this process. */
  readonly batches: BatchRunner;
  /**
   * Writes the usage counted so far and lets go of Redis; call after the server stops taking requests, before closing
   * the store.
   */
  close(): Promise<void>;
  /** Writes the usage counted so far (it is otherwise written every few seconds). */
  flushUsage(): Promise<void>;
  /**
   * Shutdown has begun: /readyz answers 503, and every answer from now on (those in flight too)
   * carries `Connection: close`, so that keep-alive connections close once answered.
   */
  beginShutdown(): void;
  readonly stopping: boolean;
}

/** What the process around the service adds to it (serve.ts); each is optional. */
export interface ServiceOptions {
  /** Readiness probes besides the store's (Redis, ...), each named in /readyz's answer. */
  readonly probes?: readonly ReadinessProbe[];
  /**
   * Where GET /metrics on the service port gets its text: this process's registry (the default),
   * the whole cluster's through the primary (WORKERS > 1), or nowhere (METRICS_PORT serves it).
   */
  readonly metricsOnServicePort?: 'process' | 'cluster' | 'none';
}

/** Health, readiness and metrics paths: access-logged at debug, since probes and scrapes come every few seconds. */
const QUIET_TRANSPORTS = new Set(['health', 'metrics']);

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

type InternalError = (req: http.IncomingMessage, res: http.ServerResponse, e: unknown) => void;

/** What the Express side needs from the assembly. */
interface AppParts {
  readonly config: Config;
  readonly store: VehicleStore;
  readonly log: Logger;
  readonly metrics: Metrics | null;
  readonly state: { stopping: boolean };
  readonly internalError: InternalError;
  /** The store's outages and failed cache writes, as the log, reglookup_store_up and /readyz tell them. */
  readonly health: StoreHealth;
}

/** Loads and checks the contract, then wires transports, service, accounts and store together. */
export async function createService(
  config: Config,
  store: VehicleStore,
  logger?: Logger,
  options: ServiceOptions = {},
): Promise<Service> {
  const log = logger ?? createLogger(config.logLevel, config.logFormat);
  const metrics: Metrics | null = config.metrics ? processMetrics() : null;
  const state = { stopping: false };
  const wsdl = loadWsdl(config.namespace);
  await assertContract(wsdl, config.namespace);

  // A failure no transport answered: logged with its stack, answered with one plain line (or, once
  // the answer has begun, by closing the connection: sendPlainError).
  const internalError: InternalError = (req, res, e) => {
    log.error('unhandled error', { error: stackOf(e) });
    sendPlainError(req, res, LookupError.internal());
  };
  const limiter = new FlexibleRateLimiter(
    {
      burst: config.rateLimitBurst,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      onError: config.rateLimitOnRedisError,
    },
    log,
  );
  await limiter.ready();
  // A store that can stop serving (PostgreSQL unreachable, SQLite's disk full) reports it here: logged once each way,
  // counted.
  const health = storeWatcher(log, metrics);
  store.watch?.(health);
  if (metrics) gaugesFrom(metrics, config, store, limiter);
  const usage = new UsageRecorder(store, config.usageDays, log);
  const tracing = config.tracing ? startTracing(config.tracing) : null;
  if (config.tracing)
    log.info('tracing lookups', {
      collector: new URL(config.tracing.tracesUrl).origin,
      serviceName: config.tracing.serviceName,
      sampleRatio: config.tracing.sampleRatio,
    });
  const { service, upstream, batches } = lookups({ config, store, log, metrics, health }, limiter, usage, tracing);
  const deps = {
    service,
    namespace: config.namespace,
    limits: config.limits,
    logger: log,
    trustProxy: config.trustProxy,
  };
  const soap = await createSoapHandler(wsdl, deps);
  // GET/POST lookups are served before Express too, when nothing but the lookup applies to them.
  const httpLookup = directHttpLookup(deps);

  const parts: AppParts = { config, store, log, metrics, state, internalError, health };
  const app = expressApp(
    parts,
    { ...deps, batches },
    wsdl,
    [...ownProbes(limiter, store), ...(upstream?.probes ?? []), ...(options.probes ?? [])],
    options.metricsOnServicePort,
  );

  return {
    handler: frontHandler(parts, (req, res) => {
      const q = (req.url ?? '').indexOf('?');
      const pathname = (q === -1 ? (req.url ?? '') : (req.url as string).slice(0, q)).replace(/\/+$/, '').toLowerCase();
      if (req.method === 'POST' && pathname === SOAP_PATH) soap(req, res);
      else if (!httpLookup(req, res)) app(req, res);
    }),
    store,
    logger: log,
    batches,
    close: async () => {
      await batches.close();
      upstream?.stop();
      await usage.close();
      await limiter.close();
      await tracing?.shutdown();
    },
    flushUsage: () => usage.flush(),
    beginShutdown() {
      state.stopping = true;
    },
    get stopping() {
      return state.stopping;
    },
  };
}

/**
 * The LookupService and what it asks: the accounts and the store, read through timedReads for the metrics, and the
 * upstream chain. With tracing on, the store, the providers and the service are wrapped to make spans
 * (ops/tracing.ts); with it off there is no wrapper, so the request path is as it was.
 */
function lookups(
  parts: Pick<AppParts, 'config' | 'store' | 'log' | 'metrics' | 'health'>,
  limiter: FlexibleRateLimiter,
  usage: UsageRecorder,
  tracing: Tracing | null,
): { service: LookupService; upstream: UpstreamSetup | null; batches: BatchRunner } {
  const { config, store, log, metrics, health } = parts;
  const traced = tracing
    ? tracedStore(store, tracing, /^postgres/.test(config.databaseUrl) ? 'postgresql' : 'sqlite')
    : store;
  // Lookups read the store through this (timed for the metrics): the service's get, and a metered
  // lookup's chargeFound through the accounts.
  const reads = metrics ? timedReads(traced, metrics) : traced;
  const accounts = new Accounts(
    reads,
    { policy: config.usernamePolicy, rateLimit: config.rateLimit, creditSpent: metrics?.creditSpent },
    limiter,
    usage,
  );
  const upstream = upstreamChain(config, traced, metrics, log, tracing, health);
  const plain = new LookupService(reads, accounts, { sandbox: config.sandbox, upstream: upstream?.chain });
  const service = tracing ? tracedLookups(plain, tracing) : plain;
  return { service, upstream, batches: batchRunner(config, store, service, log) };
}

/**
 * Batch jobs, run through the same LookupService as single lookups; started (expired jobs are swept). On close the
 * rows in flight finish and are written; the jobs are taken up again by the next process.
 */
function batchRunner(config: Config, store: VehicleStore, service: LookupService, log: Logger): BatchRunner {
  const runner = new BatchRunner(store.batches, service, {
    maxRows: config.batchMaxRows,
    retentionMs: config.batchRetentionHours * 3_600_000,
    logger: log,
  });
  runner.start();
  return runner;
}

/** Where the gauges read at each scrape come from: callers low on credit, Redis, the replicas, the last import. */
function gaugesFrom(metrics: Metrics, config: Config, store: VehicleStore, limiter: FlexibleRateLimiter): void {
  metrics.countLowCredit(() => store.admin.countLowCredit(config.creditAlertBelow));
  metrics.watchDependencies({
    redisUp: () => limiter.redisUp(),
    replicas: () => store.replicasInUse?.() ?? [],
    lastImport: () => store.lastImport(),
  });
}

/** Everything a request that no fast path took meets: the transports on Express, operations and fallbacks. */
function expressApp(
  parts: AppParts,
  deps: Parameters<typeof httpHandler>[0] & { readonly batches: BatchRunner },
  wsdl: Awaited<ReturnType<typeof loadWsdl>>,
  otherProbes: readonly ReadinessProbe[],
  metricsOnServicePort: ServiceOptions['metricsOnServicePort'],
): express.Express {
  const { config, store, log, internalError, state } = parts;
  const { service } = deps;
  const app = express();
  closeConnectionsWhenStopping(app.response, () => state.stopping);
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  // Before httpHandler, whose MAX_BODY_BYTES holds on every other route: a job reads its own, larger body.
  app.use(
    batchRouter({
      runner: deps.batches,
      logger: log,
      trustProxy: config.trustProxy,
      publicUrl: config.publicUrl,
      retentionHours: config.batchRetentionHours,
    }),
  );
  app.use(httpHandler(deps));
  app.use(
    jsonHandler({
      service,
      logger: log,
      corsOrigins: config.corsOrigins,
      publicUrl: config.publicUrl,
      trustProxy: config.trustProxy,
    }),
  );
  app.use(creditsRouter(new CreditsService(store, config.usernamePolicy), log));
  app.use(imageHandler());
  app.use(
    helpRouter({ wsdl, namespace: config.namespace, publicUrl: config.publicUrl, trustProxy: config.trustProxy }),
  );
  operationsRoutes(app, parts, otherProbes, metricsOnServicePort);
  fallbackRoutes(app, internalError);
  return app;
}

/**
 * Redis (REDIS_URL), asked on the rate limiter's own client, which knows when it is failing; PostgreSQL's read
 * replicas (DATABASE_READ_URL): one skipped degrades, never unreadies.
 */
function ownProbes(limiter: FlexibleRateLimiter, store: VehicleStore): ReadinessProbe[] {
  const redis = limiter.readinessProbe();
  const replicas = store.readinessProbe?.() ?? null;
  return [...(redis ? [redis] : []), ...(replicas ? [replicas] : [])];
}

/** /healthz, /readyz and /metrics: GET and HEAD only, access-logged at debug. */
function operationsRoutes(
  app: express.Express,
  parts: AppParts,
  otherProbes: readonly ReadinessProbe[],
  metricsOnServicePort: ServiceOptions['metricsOnServicePort'],
): void {
  const { store, log, metrics, state, internalError, health } = parts;
  // The store's probe is one index probe: readiness is asked often and must not cost a pass over millions of rows.
  // A store that answers but fails writes (a full disk) leaves the service ready, and degraded.
  const probes: readonly ReadinessProbe[] = [
    { name: 'store', check: () => store.isEmpty(), degradedNow: () => health.degraded() },
    ...otherProbes,
  ];
  const quiet = (path: string, serve: express.RequestHandler) =>
    app.all(path, (req, res, next) => {
      note(req, { transport: path === '/metrics' ? 'metrics' : 'health' });
      if (req.method === 'GET' || req.method === 'HEAD') return serve(req, res, next);
      sendPlainError(
        req,
        res,
        new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use GET`),
        { Allow: 'GET, HEAD' },
      );
    });
  quiet('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: VERSION });
  });
  // A failing dependency is logged when readiness changes, not at every probe.
  let lastReason: string | undefined;
  quiet('/readyz', (req, res) => {
    readiness(probes, state).then(
      (r) => {
        // Not ready is the service being unavailable: the access log and metrics say so by its code.
        if (!r.ready) note(req, { errorCode: 'SERVICE_UNAVAILABLE' });
        if (r.reason !== lastReason) {
          if (r.ready) log.info('ready again');
          else log.warn('not ready', { reason: r.reason, details: r.details });
          lastReason = r.reason;
        }
        const degraded = r.degraded !== undefined ? { degraded: r.degraded } : {};
        res
          .status(r.ready ? 200 : 503)
          .json(
            r.ready
              ? { status: 'ready', checks: r.checks, ...degraded }
              : { status: 'not ready', reason: r.reason, checks: r.checks, ...degraded },
          );
      },
      (e: unknown) => internalError(req, res, e),
    );
  });
  const metricsFrom = metrics ? (metricsOnServicePort ?? 'process') : 'none';
  if (metrics && metricsFrom !== 'none') {
    quiet('/metrics', (req, res) => {
      (metricsFrom === 'cluster' ? askPrimaryForMetrics() : metrics.registry.metrics()).then(
        (text) => {
          res.setHeader('Content-Type', METRICS_CONTENT_TYPE);
          res.end(text);
        },
        (e: unknown) => internalError(req, res, e),
      );
    });
  }
}

/**
 * What no route took: `/` to the service page, anything else UNKNOWN_OPERATION; Express's own failures as one plain
 * line.
 */
function fallbackRoutes(app: express.Express, internalError: InternalError): void {
  app.get('/', (_req, res) => res.redirect(302, SOAP_PATH));
  app.use((req: express.Request, res: express.Response) => {
    sendPlainError(
      req,
      res,
      new LookupError(
        'UNKNOWN_OPERATION',
        `Nothing is served at ${req.method} ${req.path.slice(0, 80)}; the service is at ${SOAP_PATH}`,
      ),
    );
  });
  // Express reports its own failures (a bad percent-escape in the path, say) here: one plain line, no stack.
  app.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = (err as { status?: number })?.status;
    if (status && status >= 400 && status < 500)
      sendPlainError(req, res, new LookupError('MALFORMED_REQUEST', 'The request could not be read'));
    else internalError(req, res, err);
  });
}

/**
 * The front of every request: its id, the access line and the metrics when it finishes, then the
 * request is served with the others of its event-loop turn (transport/turn.ts) by `dispatch`.
 */
function frontHandler(
  parts: AppParts,
  dispatch: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Service['handler'] {
  const { config, log, metrics } = parts;
  // One listener shared by every response (no closure made per request); the request is res.req.
  // It counts the request in the metrics (a few additions) and writes its access line.
  function logFinished(this: http.ServerResponse) {
    const req = this.req;
    const ctx = contextOf(req);
    if (!ctx) return;
    const ms = performance.now() - ctx.start;
    const transport = ctx.transport ?? 'other';
    const outcome = ctx.errorCode ?? (this.statusCode < 400 ? 'ok' : `HTTP_${this.statusCode}`);
    if (metrics && transport !== 'metrics') metrics.request(transport, ctx.operation ?? '', outcome, ms / 1000);
    logAccess(
      log,
      {
        id: ctx.id,
        client: clientAddress(req, config.trustProxy),
        method: req.method,
        path: loggedPath(req.url ?? ''),
        transport,
        operation: ctx.operation,
        outcome,
        status: this.statusCode,
        ms,
        caller: fingerprint(ctx.username),
        account: ctx.account ?? '-',
        sandbox: ctx.sandbox,
        source: ctx.source,
      },
      QUIET_TRANSPORTS.has(transport) ? 'debug' : 'info',
    );
  }
  const serveThisTurn = servedTogether(dispatch, parts.internalError);
  return (req, res) => {
    originForm(req);
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    setContext(req, { id, start: performance.now(), socket: req.socket });
    res.setHeader('X-Request-Id', id);
    res.on('finish', logFinished);
    serveThisTurn(req, res);
  };
}
/**
 * The path as the access log gives it: no query string (GET lookups carry the registration there),
 * and nothing after the third segment (`/api/reg.asmx/Check` is whole; a path that carries more,
 * say a value appended to an operation, loses it), so that no registration number reaches the log.
 */
export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  let cut = -1;
  for (let i = 0, slashes = 0; i < path.length; i++) {
    if (path.charCodeAt(i) === 47 && ++slashes === 4) {
      cut = i;
      break;
    }
  }
  return (cut === -1 ? path : `${path.slice(0, cut)}/…`).slice(0, 200);
}

/**
 * The store, with the time each lookup read takes recorded (until its promise settles: any store,
 * sync or not). Every other member is the store's own, called on the store itself, so that a
 * store keeping state on `this` (SQLite's shared read) sees one object whatever is called.
 */
export function timedReads(store: VehicleStore, metrics: Metrics): VehicleStore {
  // Timed from before the call: a store may do part of its work synchronously.
  const timed =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      const t = performance.now();
      return fn(...args).then((r) => {
        metrics.storeQuery((performance.now() - t) / 1000);
        return r;
      });
    };
  const timedGet: VehicleStore['get'] = timed(store.get.bind(store));
  const timedChargeFound: VehicleStore['chargeFound'] = store.chargeFound && timed(store.chargeFound.bind(store));
  return new Proxy(store, {
    get(target, name) {
      if (name === 'get') return timedGet;
      if (name === 'chargeFound') return timedChargeFound;
      const v: unknown = Reflect.get(target, name, target);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)/i;

/**
 * A request-target in absolute form (`GET http://host/path HTTP/1.1`), which HTTP/1.1 servers must
 * accept (RFC 9112 3.2.2): served as its path and query, the target's authority taking the place of
 * the Host header as the RFC says (baseUrl() still writes it only when it is a plain host).
 */
export function originForm(req: http.IncomingMessage): void {
  const url = req.url ?? '';
  if (url.startsWith('/')) return;
  const m = ABSOLUTE_FORM.exec(url);
  if (!m) return;
  const rest = m[2];
  req.url = rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`;
  req.headers.host = m[1];
}

/** Loads the bundled sample data into an empty store; whether it did. */
export async function loadSampleIfEmpty(store: VehicleStore, logger: Logger): Promise<boolean> {
  if (!(await store.isEmpty())) return false;
  const report = await importFile(store, SAMPLE_FILE, { sample: true });
  if (!report.committed)
    throw new Error(`bundled sample data is invalid: ${JSON.stringify(report.errors.slice(0, 3))}`);
  logger.info('loaded sample data', { records: report.imported });
  return true;
}

/**
 * The bundled sample data at start-up: loaded into an empty store when SAMPLE_DATA is on (by
 * default only for a store answering alone, outside production: config.ts), and a store that
 * holds only the sample says so. Where the sample is not wanted that is a warning: its fictional
 * records answer before the upstreams PROVIDERS lists, and in production to every caller.
 */
export async function sampleAtStart(store: VehicleStore, config: Config, logger: Logger): Promise<void> {
  if (config.loadSampleData && (await loadSampleIfEmpty(store, logger))) return;
  if (!(await store.holdsOnlySample())) return;
  const records = await store.count();
  if (config.loadSampleData) {
    logger.info('the store holds the bundled, fictional sample data', { records });
    return;
  }
  const upstreams = config.upstream.providers;
  const where =
    upstreams.length > 0 ? `before ${upstreams.join(', ')} for their registrations` : 'as if they were real';
  logger.warn(
    `the store holds only the bundled, fictional sample data (${records} records), which answers ${where}: import your own data (the first import removes the sample) or start on a new store`,
    { records },
  );
}

/**
 * Once shutdown begins, every answer not yet begun (those of requests already in flight too) goes
 * out with `Connection: close` and its connection closes after it, instead of waiting idle for a
 * request that will never be served. Node reads shouldKeepAlive when it writes the head, so an
 * accessor on the responses' prototype is all it takes: on the server's response class, and on
 * Express's, which Express swaps in for the requests it serves.
 */
const KEEP_ALIVE = Symbol('reglookup.keepAlive');
function closeConnectionsWhenStopping(proto: object, stopping: () => boolean): void {
  Object.defineProperty(proto, 'shouldKeepAlive', {
    configurable: true,
    get(this: { [KEEP_ALIVE]?: boolean }) {
      return this[KEEP_ALIVE] !== false && !stopping();
    },
    set(this: { [KEEP_ALIVE]?: boolean }, v: boolean) {
      this[KEEP_ALIVE] = v;
    },
  });
}

export function createHttpServer(service: Service, config: Config): http.Server {
  class Response extends http.ServerResponse {}
  closeConnectionsWhenStopping(Response.prototype, () => service.stopping);
  const server = http.createServer(
    {
      ServerResponse: Response as unknown as typeof http.ServerResponse,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(config.requestTimeoutMs, 60_000),
      connectionsCheckingInterval: 1000,
    } as http.ServerOptions,
    service.handler,
  );
  server.keepAliveTimeout = 5000;
  // Expect: 100-continue (.NET and curl send it for larger bodies): invite the body only when its
  // declared length is within the limit; otherwise the 413 goes out before the client uploads it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    // A batch job's body may be larger (BATCH_MAX_ROWS rows: transport/batch.ts).
    const limit = isBatchPath(req.url) ? batchBodyLimit(config.batchMaxRows) : config.limits.maxBodyBytes;
    if (!(declared > limit)) res.writeContinue();
    service.handler(req, res);
  });
  return server;
}
