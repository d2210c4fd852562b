// Assembles the service. The order in which a request meets things is read here, once:
//   front handler (request id, access log), then, with the other requests of the same event-loop
//   turn, in that turn's check phase (transport/turn.ts):
//     POST /api/reg.asmx            -> SOAP transport (body limit, XML guard, node-soap)
//     everything else               -> Express: GET/POST /api/reg.asmx/{Op}, WSDL and help, health
// and every transport calls the one LookupService, which asks the accounts and the store. Answers
// are prepared when records are written (transport/prepared.ts); start-up makes sure they are current.

import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Accounts } from './accounts/accounts';
import type { Config } from './config';
import { assertContract, loadWsdl, SOAP_PATH } from './contract/wsdl';
import { createLogger, logAccess, type Logger } from './ops/logger';
import { LookupError } from './service/errors';
import { LookupService } from './service/lookup';
import { importFile } from './store/import';
import { updatePrepared, type VehicleStore } from './store/store';
import { contextOf, setContext } from './transport/context';
import { helpRouter } from './transport/help';
import { httpHandler } from './transport/http';
import { PREPARED_FORMS } from './transport/prepared';
import { sendPlainError } from './transport/plain';
import { createSoapHandler } from './transport/soap';
import { servedTogether } from './transport/turn';

export const SAMPLE_FILE = path.resolve(__dirname, '..', 'data', 'sample.ndjson');

export interface Service {
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  readonly store: VehicleStore;
  readonly logger: Logger;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** Loads and checks the contract, then wires transports, service, accounts and store together. */
export async function createService(config: Config, store: VehicleStore, logger?: Logger): Promise<Service> {
  const log = logger ?? createLogger(config.logLevel, config.logFormat);
  const wsdl = loadWsdl(config.namespace);
  await assertContract(wsdl, config.namespace);
  await ensurePrepared(store, log);

  // A failure no transport answered: logged with its stack, answered with one plain line (or, once
  // the answer has begun, by closing the connection: sendPlainError).
  const internalError = (req: http.IncomingMessage, res: http.ServerResponse, e: unknown) => {
    log.error('unhandled error', { error: String((e as Error)?.stack ?? e) });
    sendPlainError(req, res, new LookupError('INTERNAL_ERROR', 'Internal error; the request was logged'));
  };
  const accounts = new Accounts(store, { policy: config.usernamePolicy, ratePerMinute: config.rateLimitPerMinute });
  const service = new LookupService(store, accounts);
  const deps = { service, namespace: config.namespace, limits: config.limits, logger: log };
  const soap = await createSoapHandler(wsdl, deps);

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.use(httpHandler(deps));
  app.use(helpRouter({ wsdl, namespace: config.namespace, publicUrl: config.publicUrl, trustProxy: config.trustProxy }));
  app.get('/healthz', async (_req, res) => {
    // One index probe: a health check runs often and must not cost a pass over millions of rows.
    const empty = await store.isEmpty();
    res.json({ status: 'ok', empty });
  });
  app.get('/', (_req, res) => res.redirect(302, SOAP_PATH));
  app.use((req: express.Request, res: express.Response) => {
    sendPlainError(req, res, new LookupError('UNKNOWN_OPERATION', `Nothing is served at ${req.method} ${req.path.slice(0, 80)}; the service is at ${SOAP_PATH}`));
  });
  // Express reports its own failures (a bad percent-escape in the path, say) here: one plain line, no stack.
  app.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = (err as { status?: number })?.status;
    if (status && status >= 400 && status < 500) sendPlainError(req, res, new LookupError('MALFORMED_REQUEST', 'The request could not be read'));
    else internalError(req, res, err);
  });

  // One listener shared by every response (no closure made per request); the request is res.req.
  function logFinished(this: http.ServerResponse) {
    const req = this.req;
    const ctx = contextOf(req);
    if (!ctx) return;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    logAccess(log, {
      id: ctx.id,
      method: req.method,
      path: (q === -1 ? url : url.slice(0, q)).slice(0, 200),
      transport: ctx.transport,
      operation: ctx.operation,
      status: this.statusCode,
      error: ctx.errorCode,
      ms: performance.now() - ctx.start,
    });
  }
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    setContext(req, { id, start: performance.now() });
    res.setHeader('X-Request-Id', id);
    res.on('finish', logFinished);
    serveThisTurn(req, res);
  };
  const dispatch = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const q = (req.url ?? '').indexOf('?');
    const pathname = (q === -1 ? req.url ?? '' : (req.url as string).slice(0, q)).replace(/\/+$/, '').toLowerCase();
    if (req.method === 'POST' && pathname === SOAP_PATH) soap(req, res);
    else app(req, res);
  };
  const serveThisTurn = servedTogether(dispatch, internalError);
  return { handler, store, logger: log };
}

/**
 * Lookups read answers prepared when records were written; a store whose answers were prepared by
 * another version of the service (or by none) has them all made anew before anything is served,
 * and records without any get theirs.
 */
export async function ensurePrepared(store: VehicleStore, logger: Logger): Promise<void> {
  const t = Date.now();
  const { records, all } = await updatePrepared(store, PREPARED_FORMS);
  if (records === 0) return;
  // all: made under another version (an upgrade); otherwise records written without them (by an
  // older release's import, say).
  logger.info(all ? 'prepared the stored answers for this version' : 'prepared the answers of records that had none', { records, ms: Date.now() - t });
}

/** Loads the bundled sample data into an empty store. */
export async function loadSampleIfEmpty(store: VehicleStore, logger: Logger): Promise<void> {
  if (!(await store.isEmpty())) return;
  const report = await importFile(store, SAMPLE_FILE, PREPARED_FORMS);
  if (!report.committed) throw new Error(`bundled sample data is invalid: ${JSON.stringify(report.errors.slice(0, 3))}`);
  logger.info('loaded sample data', { records: report.imported });
}

export function createHttpServer(service: Service, config: Config): http.Server {
  const server = http.createServer({ requestTimeout: config.requestTimeoutMs, headersTimeout: Math.min(config.requestTimeoutMs, 60_000), connectionsCheckingInterval: 1000 } as http.ServerOptions, service.handler);
  server.keepAliveTimeout = 5000;
  // Expect: 100-continue (.NET and curl send it for larger bodies): invite the body only when its
  // declared length is within the limit; otherwise the 413 goes out before the client uploads it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > config.limits.maxBodyBytes)) res.writeContinue();
    service.handler(req, res);
  });
  return server;
}
