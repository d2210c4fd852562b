// The JSON API: GET /api/json.aspx/{Operation}/{RegistrationNumber}[/{State}], as the public
// service's JSON variant. Path segments and the query string decode into the same service object
// the other transports call; the username comes from HTTP Basic authentication or a `username`
// query parameter. 200 is the vehicleJson object itself (UKMOT: the UKMOTData fields as an object);
// errors are the error table's status with {"code","message"}. Also its OpenAPI document, HEAD and
// OPTIONS, and CORS for the origins in CORS_ORIGINS.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { findOperation, namesIgnoringCase, suggestOperation } from '../contract/operations';
import { JSON_PATH, jsonPathTemplate, OPENAPI_PATH, openApiDocument } from '../contract/openapi';
import { asLookupError, ERRORS, LookupError, quote } from '../service/errors';
import type { TrustedProxies } from '../config';
import type { LookupService, RawParams } from '../service/lookup';
import { callerOf } from './forwarded';
import { resultJson } from '../service/answer-json';
import type { Logger } from '../ops/logger';
import { contextOf, note } from './context';
import { baseUrl } from './help';
import { parseForm, queryString } from './http';
import { lookupFailure } from './lookup';
import { answerHeaders } from './answers';

export { resultJson } from '../service/answer-json';

interface JsonDeps {
  readonly service: LookupService;
  readonly logger: Logger;
  /** CORS_ORIGINS: allowed origins, ['*'] for any, [] for none. */
  readonly corsOrigins: readonly string[];
  readonly publicUrl: string | null;
  readonly trustProxy: TrustedProxies;
}

/** Query parameters the JSON API reads (the others come from the path); names match ignoring case. */
const QUERY_NAMES = namesIgnoringCase(['username', 'Model']);
const ALLOW = 'GET, HEAD, OPTIONS';
const PREFIX = JSON_PATH.toLowerCase() + '/';
const utf8 = new TextDecoder('utf-8', { fatal: true });

type Headers = Record<string, string | number>;

function corsHeaders(req: IncomingMessage, origins: readonly string[]): Headers {
  if (origins.length === 0) return {};
  const origin = req.headers.origin;
  const any = origins[0] === '*';
  const headers: Headers = any ? {} : { Vary: 'Origin' };
  if (origin === undefined || !(any || origins.includes(origin))) return headers;
  headers['Access-Control-Allow-Origin'] = any ? '*' : origin;
  headers['Access-Control-Expose-Headers'] = 'Retry-After, X-Error-Code, X-Request-Id, WWW-Authenticate, Age';
  return headers;
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Headers): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendJsonError(
  req: IncomingMessage,
  res: ServerResponse,
  err: LookupError,
  headers: Headers,
  status = err.spec.status,
): void {
  note(req, { errorCode: err.code });
  const h: Headers = { ...headers, 'X-Error-Code': err.code };
  if (err.retryAfter) h['Retry-After'] = err.retryAfter;
  send(req, res, status, JSON.stringify({ code: err.code, message: err.message }), h);
}

function decodeSegment(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new LookupError('MALFORMED_REQUEST', `The ${what} in the path is not valid percent-encoded UTF-8`);
  }
}

const BASIC_MALFORMED =
  'The Basic credentials are not valid base64 of UTF-8 text; send one credential, Authorization: Basic base64(username:password)';
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The username of an `Authorization: Basic` header (the password is ignored), '' for an empty one,
 * or null when the request has no Basic credentials (no header, or another scheme). A header of the
 * Basic scheme whose credentials are not one token of canonical base64 (RFC 4648: padded, no
 * spaces, no bits after the last character's) of UTF-8 text is MALFORMED_REQUEST, never read as
 * "no username".
 */
export function basicUsername(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^[ \t]*basic(?:[ \t]+(.*?))?[ \t]*$/is.exec(header);
  if (!m) return /^[ \t]*basic(?![!#$%&'*+.^_`|~0-9a-z-])/i.test(header) ? malformedBasic() : null;
  const token = m[1] ?? '';
  if (!BASE64_RE.test(token)) return malformedBasic();
  const bytes = Buffer.from(token, 'base64');
  if (bytes.toString('base64') !== token) return malformedBasic();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return malformedBasic();
  }
  const colon = text.indexOf(':');
  return colon === -1 ? text : text.slice(0, colon);
}

function malformedBasic(): never {
  throw new LookupError('MALFORMED_REQUEST', BASIC_MALFORMED);
}

/**
 * The username, from HTTP Basic authentication or ?username= (the same one if both); undefined
 * when neither gives one. An empty ?username= is not a username given (it does not conflict with
 * Basic credentials).
 */
function usernameOf(req: express.Request, query: RawParams): unknown {
  const basic = basicUsername(req.headers.authorization);
  const given = typeof query.username === 'string' && query.username.trim() === '' ? undefined : query.username;
  if (basic !== null && basic !== '' && given !== undefined && given !== basic) {
    throw new LookupError(
      'INVALID_PARAMETER',
      'The username was given both by Basic authentication and in the query string, differently; give it once',
    );
  }
  return basic !== null && basic !== '' ? basic : given;
}

/** The answer to a CORS preflight (OPTIONS): 204 with what may be asked. */
function preflight(res: express.Response, cors: Headers): void {
  const headers: Headers = { ...cors, Allow: ALLOW, 'Content-Length': 0 };
  if (cors['Access-Control-Allow-Origin'] !== undefined) {
    headers['Access-Control-Allow-Methods'] = ALLOW;
    headers['Access-Control-Allow-Headers'] = 'Authorization';
    headers['Access-Control-Max-Age'] = 600;
  }
  res.writeHead(204, headers);
  res.end();
}

/** One lookup at /api/json.aspx/{Operation}/{RegistrationNumber}[/{state}]. */
function jsonLookup(
  deps: JsonDeps,
  req: express.Request,
  res: express.Response,
  segments: string[],
  cors: Headers,
): void {
  const opName = decodeSegment(segments[0], 'operation name');
  const op = findOperation(opName);
  if (!op) {
    const near = suggestOperation(opName);
    throw new LookupError(
      'UNKNOWN_OPERATION',
      `Unknown operation ${quote(opName)}${near ? ` (did you mean '${near.name}'? operation names are case-sensitive)` : ''}`,
    );
  }
  note(req, { operation: op.name });
  if (segments.length > (op.state ? 3 : 2)) {
    throw new LookupError(
      'UNKNOWN_OPERATION',
      `Nothing is served at that path; ${op.name} is at ${jsonPathTemplate(op)}`,
    );
  }
  const query = parseForm(queryString(req.url), QUERY_NAMES, 'query names are matched ignoring case');
  const raw = Object.create(null) as Record<string, unknown>;
  if (segments.length > 1) raw.RegistrationNumber = decodeSegment(segments[1], 'registration');
  if (op.state && segments.length > 2) raw[op.state.param] = decodeSegment(segments[2], op.state.param);
  if (query.Model !== undefined) raw.Model = query.Model;
  const username = usernameOf(req, query);
  if (username === undefined || (typeof username === 'string' && username.trim() === '')) {
    sendJsonError(
      req,
      res,
      new LookupError(
        'MISSING_PARAMETER',
        `No username: give it by HTTP Basic authentication (Authorization: Basic base64(username:password)) or as ?username=`,
      ),
      { ...cors, 'WWW-Authenticate': 'Basic realm="reglookup", charset="UTF-8"' },
      401,
    );
    return;
  }
  raw.username = username;
  deps.service
    .lookup(op, raw, callerOf(req, deps.trustProxy), contextOf(req))
    .then((result) => {
      const headers = { ...cors };
      answerHeaders(result, headers);
      send(req, res, 200, resultJson(result), headers);
    })
    .catch((e: unknown) => {
      sendJsonError(req, res, lookupFailure(req, e, op.name, deps.logger), cors);
    });
}

export function jsonHandler(deps: JsonDeps): express.RequestHandler {
  const errorCodes = Object.keys(ERRORS);

  return (req, res, next) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const lower = pathname.toLowerCase();
    if (!lower.startsWith(PREFIX) && lower !== JSON_PATH.toLowerCase()) return next();
    note(req, { transport: 'json' });
    const cors = corsHeaders(req, deps.corsOrigins);
    if (req.method === 'OPTIONS') return preflight(res, cors);
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJsonError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET`), {
          ...cors,
          Allow: ALLOW,
        });
        return;
      }
      let rest = pathname.slice(PREFIX.length);
      if (rest.endsWith('/')) rest = rest.slice(0, -1);
      if (lower === OPENAPI_PATH.toLowerCase()) {
        send(
          req,
          res,
          200,
          JSON.stringify(openApiDocument(baseUrl(req, deps.publicUrl, deps.trustProxy), errorCodes)),
          cors,
        );
        return;
      }
      if (rest === '')
        throw new LookupError(
          'UNKNOWN_OPERATION',
          `Give an operation: ${JSON_PATH}/{Operation}/{RegistrationNumber}; the operations are in ${OPENAPI_PATH}`,
        );
      jsonLookup(deps, req, res, rest.split('/'), cors);
    } catch (e) {
      sendJsonError(req, res, asLookupError(e), cors);
    }
  };
}
