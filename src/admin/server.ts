// The admin listener (ADMIN_PORT): its own http.Server, never the public port. Every request meets,
// in order: the security headers; the token (401 for anything without a valid one, whatever the
// path: nothing is said about what exists), with failures slowed as they arrive, per address and in
// all (gate.ts); then the console's static files, the OpenAPI document, or a route of the table
// (routes.ts), whose query and body are checked against the route's own schemas. Errors are the
// JSON API's {"code","message"}. The access line names the token's name, never the token, and the
// path without its query.

import http from 'node:http';
import type { AdminToken } from '../config';
import { fingerprint } from '../ops/fingerprint';
import type { Logger } from '../ops/logger';
import { ERRORS, stackOf } from '../core/errors';
import { StoreUnavailableError } from '../store/store';
import type { VehicleStore } from '../store/store';
import { AdminError, adminErrorOf, invalid } from './errors';
import { FailureGate, TokenCheck, type Hold } from './gate';
import { openApiDocument, OPENAPI_PATH } from './openapi';
import { OverviewHistory } from './overview';
import { ROUTES, type AdminContext, type Reply, type Route } from './routes';
import type { AdminBatches } from './batch';
import { check, duplicateKey } from './schema';
import { consoleFiles, serveStatic, type StaticFile } from './static';

interface AdminOptions {
  readonly store: VehicleStore;
  readonly tokens: readonly AdminToken[];
  readonly logger: Logger;
  /** This process's metrics as Prometheus text, for the console's overview; null: METRICS=off. */
  readonly metricsText: (() => Promise<string>) | null;
  /** How often the overview keeps a reading (a minute; tests shorten it). */
  readonly overviewEveryMs?: number;
  /** The time a request may take to arrive, headers and body (REQUEST_TIMEOUT_MS, as on the public port). */
  readonly requestTimeoutMs?: number;
  /** USERNAME_ROTATION_GRACE_S: how long a rotated-out username stays valid (default 24 h). */
  readonly rotationGraceS?: number;
  /** The service's batch jobs, when it runs in this process (WORKERS=1). */
  readonly batches?: AdminBatches | null;
}

const MAX_BODY = 65_536;

/** Sent with every answer: no framing, no sniffing, no inline script, nothing kept by caches. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

interface Compiled {
  readonly route: Route;
  readonly re: RegExp;
}

function compile(routes: readonly Route[]): Compiled[] {
  return routes.map((route) => ({ route, re: new RegExp(`^${route.path.replace(/\{name\}/g, '([^/]+)')}$`) }));
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    ...(text ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function sendError(res: http.ServerResponse, e: AdminError): void {
  sendJson(res, e.status, { code: e.code, message: e.message }, { 'X-Error-Code': e.code, ...e.headers });
}

// A body over MAX_BODY is still read and dropped up to this much more (or for this long) before its
// 413 goes out: a client still sending when the server answers and closes gets a reset, not the answer.
const DRAIN_BYTES = 256 * 1024;
const DRAIN_MS = 1000;

function tooLarge(req: http.IncomingMessage, logger: Logger, limit: number): AdminError {
  logger.warn('admin request body too large', {
    client: req.socket.remoteAddress,
    path: loggedPath(req.url ?? ''),
    limit,
  });
  return new AdminError(413, 'BODY_TOO_LARGE', `the body is larger than ${limit} bytes`, { Connection: 'close' });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body within `limit` bytes, as UTF-8; over it, 413 once a little more of it has been drained. */
function readBody(req: http.IncomingMessage, logger: Logger, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const refuse = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.removeAllListeners('data');
      req.pause();
      reject(tooLarge(req, logger, limit));
    };
    const startDrain = () => {
      over = true;
      chunks.length = 0;
      if (req.complete || declared > limit + DRAIN_BYTES) return refuse();
      timer = setTimeout(refuse, DRAIN_MS);
    };
    if (declared > limit) startDrain();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (over) {
        if (size > limit + DRAIN_BYTES) refuse();
      } else if (size > limit) startDrain();
      else chunks.push(c);
    });
    req.on('end', () => {
      if (over) return refuse();
      try {
        resolve(UTF8.decode(Buffer.concat(chunks)));
      } catch {
        reject(new AdminError(400, 'MALFORMED_JSON', 'the body is not valid UTF-8'));
      }
    });
    req.on('error', reject);
  });
}

async function bodyOf(req: http.IncomingMessage, route: Route, logger: Logger, limit: number): Promise<unknown> {
  if (!route.body) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json')
    throw new AdminError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON, with Content-Type: application/json');
  const text = await readBody(req, logger, limit);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AdminError(400, 'MALFORMED_JSON', 'the body is not valid JSON');
  }
  // JSON.parse keeps the last of a key given twice: {"amount":5,"amount":7} would credit 7.
  const twice = duplicateKey(text);
  if (twice !== null) throw invalid(`${JSON.stringify(twice.slice(0, 64))} is given more than once in one object`);
  const problem = check(route.body, body);
  if (problem) throw invalid(problem);
  return body;
}

function queryOf(search: URLSearchParams, route: Route): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  const declared = route.query ?? {};
  for (const name of search.keys()) {
    if (!(name in declared))
      throw invalid(
        `${name} is not a query parameter of this path${Object.keys(declared).length ? ` (parameters: ${Object.keys(declared).join(', ')})` : ''}`,
      );
    if (search.getAll(name).length > 1) throw invalid(`${name} is given more than once`);
  }
  for (const [name, p] of Object.entries(declared)) {
    const raw = search.get(name);
    if (raw === null || raw === '') {
      if (p.required) throw invalid(`${name} is required`);
      continue;
    }
    if (p.schema.type === 'integer' && !/^-?\d{1,15}$/.test(raw))
      throw invalid(`${name} must be a whole number, got ${JSON.stringify(raw.slice(0, 40))}`);
    const value = p.schema.type === 'integer' ? Number(raw) : raw;
    const problem = check(p.schema, value, name);
    if (problem) throw invalid(problem);
    out[name] = value;
  }
  return out;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalid('the username in the path is not valid percent-encoded UTF-8');
  }
}

// A caller's path names its username, the caller's credential: the log line names its fingerprint.
const USER_PATH = /^(\/admin\/api\/users\/)([^/]*)(.*)$/;

/** The path of an admin request as logged: without its query string, a username as its fingerprint. */
export function loggedPath(url: string): string {
  const p = url.split('?')[0];
  const m = USER_PATH.exec(p);
  if (!m) return p.slice(0, 200);
  let name: string;
  try {
    name = decodeURIComponent(m[2]);
  } catch {
    name = m[2];
  }
  return `${m[1]}${fingerprint(name)}${m[3]}`.slice(0, 200);
}

interface Served {
  readonly compiled: readonly Compiled[];
  readonly statics: ReadonlyMap<string, StaticFile>;
  readonly ctx: AdminContext;
  readonly logger: Logger;
}

/** A request with a good token (or for a console file): the file, the document, or the route's answer. */
async function serve(
  on: Served,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  actor: string,
): Promise<void> {
  const { compiled, statics, ctx } = on;
  const method = req.method ?? 'GET';
  const file = statics.get(url.pathname);
  if (file && (method === 'GET' || method === 'HEAD')) return serveStatic(req, res, file);
  if (url.pathname === OPENAPI_PATH && method === 'GET') return sendJson(res, 200, openApiDocument());
  const matches = compiled.filter((c) => c.re.test(url.pathname));
  const hit = matches.find((c) => c.route.method === method);
  if (!hit) {
    if (matches.length === 0)
      throw new AdminError(
        404,
        'NOT_FOUND',
        `nothing is at ${url.pathname.slice(0, 100)}; the API is described at ${OPENAPI_PATH}`,
      );
    throw new AdminError(
      405,
      'METHOD_NOT_ALLOWED',
      `${method} is not allowed here; use ${matches.map((m) => m.route.method).join(', ')}`,
      { Allow: matches.map((m) => m.route.method).join(', ') },
    );
  }
  const m = hit.re.exec(url.pathname) as RegExpExecArray;
  const params: Record<string, string> = m[1] !== undefined ? { name: decodeName(m[1]) } : {};
  const query = queryOf(url.searchParams, hit.route);
  const body = await bodyOf(req, hit.route, on.logger, hit.route.maxBody?.(ctx) ?? MAX_BODY);
  const reply: Reply = await hit.route.handle({ ctx, params, query, body, headers: req.headers, actor });
  if (reply.text !== undefined) {
    res.writeHead(reply.status, {
      'Content-Type': reply.contentType ?? 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(reply.text),
    });
    res.end(reply.text);
  } else sendJson(res, reply.status, reply.body);
}

export function createAdminServer(opts: AdminOptions): http.Server {
  const tokens = new TokenCheck(opts.tokens);
  const gate = new FailureGate();
  const compiled = compile(ROUTES);
  const statics: ReadonlyMap<string, StaticFile> = consoleFiles();
  // Read every minute while the listener is open, for the overview's last hour.
  const overview = opts.metricsText ? new OverviewHistory(opts.metricsText, opts.overviewEveryMs) : null;
  const on: Served = {
    compiled,
    statics,
    ctx: { store: opts.store, overview, rotationGraceS: opts.rotationGraceS ?? 86_400, batches: opts.batches ?? null },
    logger: opts.logger,
  };

  // The public listener's time-outs (app.ts): a client that sends its request slowly is cut off.
  const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
  const server = http.createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(requestTimeoutMs, 60_000),
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      const start = performance.now();
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
      const client = req.socket.remoteAddress ?? '';
      let actor: string | null = null;
      res.on('finish', () => {
        opts.logger.info('admin request', {
          client,
          method: req.method,
          path: loggedPath(req.url ?? ''),
          status: res.statusCode,
          actor: actor ?? undefined,
          ms: Math.round(performance.now() - start),
        });
      });
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://admin.invalid');
      } catch {
        return sendError(res, invalid('the request target is not a valid path'));
      }
      // Browsers ask for it on every console page, without the token: nothing to say, and no failed attempt.
      if (url.pathname === '/favicon.ico' && (req.method === 'GET' || req.method === 'HEAD'))
        return void res.writeHead(204).end();
      // The console's own files carry nothing secret (they are in the package): the page that asks for the token loads
      // without one.
      const file = statics.get(url.pathname);
      if (file) actor = 'console';
      else {
        const busyMs = gate.busy(client);
        if (busyMs > 0) return sendError(res, tooManyAttempts(busyMs));
        actor = tokens.who(req.headers.authorization);
      }
      if (actor === null) return refuse(res, gate.failed(client));
      if (!file) gate.succeeded(client);
      serve(on, req, res, url, actor).catch((e: unknown) => sendFailure(res, e, opts.logger));
    },
  );
  server.keepAliveTimeout = 5000;
  server.on('listening', () => overview?.start());
  server.on('close', () => overview?.stop());
  return server;
}

/** A request that failed: its own error, the store unreachable (503), or anything else (500, logged). */
function sendFailure(res: http.ServerResponse, e: unknown, logger: Logger): void {
  const known = adminErrorOf(e);
  if (known) return sendError(res, known);
  if (e instanceof StoreUnavailableError)
    return sendError(
      res,
      new AdminError(503, 'SERVICE_UNAVAILABLE', 'the store cannot be reached; retry in a few seconds'),
    );
  logger.error('admin request failed', { error: stackOf(e) });
  sendError(res, new AdminError(500, 'INTERNAL_ERROR', ERRORS.INTERNAL_ERROR.message));
}

const UNAUTHORIZED = 'a valid admin token is required: Authorization: Bearer <token>';

function refuse(res: http.ServerResponse, hold: Hold): void {
  const headers: Record<string, string> = { 'WWW-Authenticate': 'Bearer realm="reglookup-admin"' };
  if (hold.waitMs > 0) headers['Retry-After'] = String(Math.ceil(hold.waitMs / 1000));
  const send = () => {
    hold.release();
    if (!res.destroyed) sendError(res, new AdminError(401, 'UNAUTHORIZED', UNAUTHORIZED, headers));
  };
  if (hold.waitMs === 0) return send();
  // A client that gives up keeps its place among the held refusals until its turn: otherwise closing
  // each guess soon after sending it would have guesses checked as fast as they are sent.
  setTimeout(send, hold.waitMs).unref();
}

/** Too many refusals are held for this address, or for all: refused before the token is looked at. */
function tooManyAttempts(retryMs: number): AdminError {
  return new AdminError(
    429,
    'TOO_MANY_ATTEMPTS',
    'too many failed attempts are waiting for their answer; retry later',
    { 'Retry-After': String(Math.ceil(retryMs / 1000)) },
  );
}
