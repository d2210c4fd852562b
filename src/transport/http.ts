// HTTP GET and POST at /api/reg.asmx/{Operation}: query string or form body into the same service
// object the SOAP transport uses; the answer is the result element itself as the XML root.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Limits } from '../config';
import { findOperation, suggestOperation } from '../contract/operations';
import { asLookupError, LookupError, quote } from '../service/errors';
import type { RawParams } from '../service/lookup';
import { bodyIfArrived, checkCharset, decodeUtf8, endIfArrived, hasBody, parseMediaType, readBody } from './body';
import { contextOf, note, noteUsername } from './context';
import { callerOf } from './forwarded';
import { sendPlainError } from './plain';
import { answerHeaders, resultInner } from './answers';
import { httpResultXml } from './xml';
import { lookupFailure, type TransportDeps } from './lookup';

const MAX_PAIRS = 64;
/** What a repeated parameter's message says of HTTP GET/POST's case rule. */
export const HTTP_CASE_NOTE = 'names are matched ignoring case over HTTP GET/POST';

/**
 * application/x-www-form-urlencoded (and query strings): repeated names become arrays. With
 * `names` (an operation's paramsIgnoringCase), a name that matches one of them ignoring case is
 * taken under that spelling, as ASP.NET reads query strings and forms: `state` is CheckUSA's
 * `State`, and `State=CA&state=CA` is that parameter given twice. Other names are kept as given.
 * With `caseNote` too, one of `names` given more than once is INVALID_PARAMETER at once, the
 * message ending with the note (which says that names differing only in case are the same name).
 */
export function parseForm(text: string, names?: ReadonlyMap<string, string>, caseNote?: string): RawParams {
  const out = Object.create(null) as Record<string, string | string[]>;
  if (text === '') return out;
  const pairs = text.split('&');
  if (pairs.length > MAX_PAIRS) throw new LookupError('MALFORMED_REQUEST', `More than ${MAX_PAIRS} parameters`);
  for (const pair of pairs) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
      value = eq === -1 ? '' : decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw new LookupError('MALFORMED_REQUEST', 'The parameters are not valid percent-encoded UTF-8');
    }
    // Its own spelling is found without making a lower-case copy; only other spellings pay for one.
    if (names !== undefined) name = names.get(name) ?? names.get(name.toLowerCase()) ?? name;
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  if (names !== undefined && caseNote !== undefined) {
    for (const name of new Set(names.values())) {
      const v = out[name];
      if (Array.isArray(v))
        throw new LookupError(
          'INVALID_PARAMETER',
          `Parameter '${name}' was given ${v.length} times; give it once (${caseNote})`,
        );
    }
  }
  return out;
}

export function queryString(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q === -1 ? '' : (url as string).slice(q + 1);
}

/** The request's parameters: at once from the query string or an already arrived body, else once the body is read. */
function params(
  req: IncomingMessage,
  limits: Limits,
  names: ReadonlyMap<string, string>,
): RawParams | Promise<RawParams> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    endIfArrived(req);
    return parseForm(queryString(req.url), names, HTTP_CASE_NOTE);
  }
  const media = parseMediaType(req.headers['content-type']);
  if (media.type !== 'application/x-www-form-urlencoded') {
    throw new LookupError(
      'UNSUPPORTED_MEDIA_TYPE',
      `HTTP POST takes Content-Type application/x-www-form-urlencoded, not ${quote(media.type || '(none)', 60)}`,
    );
  }
  checkCharset(media);
  const body = bodyIfArrived(req, limits.maxBodyBytes);
  if (body !== null) return parseForm(decodeUtf8(body), names, HTTP_CASE_NOTE);
  return readBody(req, limits.maxBodyBytes).then((b) => parseForm(decodeUtf8(b), names, HTTP_CASE_NOTE));
}

const OPERATION_PATH = /^\/api\/reg\.asmx\/([^/]+)\/?$/i;

/**
 * MAX_BODY_BYTES holds on every route, not only where a body is used. httpHandler is mounted first,
 * so this sees every request Express serves (POST /api/reg.asmx is served before Express and reads
 * its own body). A body sent where none is taken is read within the limit and dropped, so that an
 * oversized one is a 413 here too rather than megabytes quietly read and thrown away.
 */
function bodyLimit(limits: Limits): express.RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    // POST /api/reg.asmx/{Operation} reads its own form body; every other request's body is read here.
    const op = req.method === 'POST' ? OPERATION_PATH.exec(req.path)?.[1] : undefined;
    if (op !== undefined && findOperation(op)) return next();
    readBody(req, limits.maxBodyBytes).then(
      () => next(),
      (e: unknown) => sendPlainError(req, res, asLookupError(e)),
    );
  };
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new LookupError('MALFORMED_REQUEST', 'The operation name is not valid percent-encoded UTF-8');
  }
}

/** The lookup itself, on a request already known to be GET/POST /api/reg.asmx/{name}. */
function lookupRoute(deps: TransportDeps): (req: IncomingMessage, res: ServerResponse, name: string) => void {
  return (req, res, name) => {
    note(req, { transport: req.method === 'POST' ? 'post' : 'get' });
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') {
      sendPlainError(
        req,
        res,
        new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET or POST`),
        { Allow: 'GET, HEAD, POST' },
      );
      return;
    }
    const op = findOperation(name);
    if (!op) {
      const near = suggestOperation(name);
      sendPlainError(
        req,
        res,
        new LookupError(
          'UNKNOWN_OPERATION',
          `Unknown operation ${quote(name)}${near ? ` (did you mean '${near.name}'? operation names are case-sensitive)` : ''}`,
        ),
      );
      return;
    }
    note(req, { operation: op.name });
    new Promise<RawParams>((resolve) => resolve(params(req, deps.limits, op.paramsIgnoringCase)))
      .then((raw) => {
        // Noted before validation, so that the access log names the caller of a refused request too.
        noteUsername(req, raw.username);
        return deps.service.lookup(op, raw, callerOf(req, deps.trustProxy), contextOf(req));
      })
      .then((result) => {
        // Encoded once: the length and the bytes sent come from the same buffer.
        const body = Buffer.from(httpResultXml(op.result, deps.namespace, resultInner(result, 'http')), 'utf8');
        const headers: Record<string, string | number> = {
          'Content-Type': 'text/xml; charset=utf-8',
          'Content-Length': body.length,
        };
        answerHeaders(result, headers);
        res.writeHead(200, headers);
        res.end(req.method === 'HEAD' ? undefined : body);
      })
      .catch((e: unknown) => {
        sendPlainError(req, res, lookupFailure(req, e, op.name, deps.logger));
      });
  };
}

/**
 * Serves GET/POST /api/reg.asmx/{Operation} when it can, before Express (as SOAP is): returns
 * false for anything else, which Express then serves (httpHandler below, the same rules). Taken
 * here: the path is an operation's and there is no body, or a POST names a real operation (its
 * form body is read by the lookup itself). Express's own work a request (its request and response
 * prototypes, the middleware stack) is then not paid on the lookup path.
 */
export function directHttpLookup(deps: TransportDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const lookup = lookupRoute(deps);
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const m = OPERATION_PATH.exec(q === -1 ? url : url.slice(0, q));
    if (!m) return false;
    let name: string;
    try {
      name = decodeName(m[1]);
    } catch {
      return false; // Express answers it, as before
    }
    if (hasBody(req) && !(req.method === 'POST' && findOperation(name))) return false;
    lookup(req, res, name);
    return true;
  };
}

/**
 * GET/POST /api/reg.asmx/{Operation}, as one middleware at the head of the Express app: it matches
 * its own path (no router layers on the lookup route) and passes everything else on, after the
 * body limit.
 */
export function httpHandler(deps: TransportDeps): express.RequestHandler {
  const limitBody = bodyLimit(deps.limits);
  const lookup = lookupRoute(deps);
  return (req, res, next) => {
    const m = OPERATION_PATH.exec(req.path);
    if (!m) return limitBody(req, res, next);
    let name: string;
    try {
      name = decodeName(m[1]);
    } catch (e) {
      sendPlainError(req, res, asLookupError(e));
      return;
    }
    // A POST to a real operation reads its own form body; any other body is read within the limit first.
    if (!hasBody(req) || (req.method === 'POST' && findOperation(name))) return lookup(req, res, name);
    limitBody(req, res, () => lookup(req, res, name));
  };
}
