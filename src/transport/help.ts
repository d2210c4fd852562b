// GET /api/reg.asmx, as ASMX answers it: the WSDL (?WSDL, any case) with the caller's address in
// every port; the DISCO document (?disco); a page per operation (?op=NAME: a test form and sample
// messages; a 404 page for a name the catalogue lacks); otherwise the service page listing the
// operations. The pages are written by pages.ts, the samples by samples.ts. Of the request only
// the host (checked by baseUrl) is written into them, escaped.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { OPERATIONS, findOperation, namesIgnoringCase, suggestOperation, type Operation } from '../contract/operations';
import { readContract, type ContractModel } from '../contract/schema';
import { SOAP_PATH, wsdlFor } from '../contract/wsdl';
import { LookupError } from '../service/errors';
import type { TrustedProxies } from '../config';
import { note } from './context';
import { discoDocument } from './disco';
import { publicBase } from './forwarded';
import { parseForm, queryString } from './http';
import { HELP_CSP, operationPage, servicePage, unknownOperationPage, type PageLinks } from './pages';
import { sendPlainError } from './plain';
import { operationSamples } from './samples';

interface HelpDeps {
  readonly wsdl: string;
  readonly namespace: string;
  readonly publicUrl: string | null;
  /** Proxies whose X-Forwarded-Proto/-Host/-Prefix set the addresses written into the WSDL. */
  readonly trustProxy?: TrustedProxies;
}

const NO_PROXIES: TrustedProxies = { list: [], has: () => false };
const MAX_CACHED = 32;

/** Where the JSON API's OpenAPI document is served (issue #11), relative to the base URL. */
const OPENAPI_PATH = '/api/json.aspx/openapi.json';

/**
 * The base URL a caller used (scheme, host, and behind a trusted proxy the forwarded scheme, host
 * and prefix), or PUBLIC_URL when set. The one place that decides it: the WSDL's addresses, the
 * DISCO document, the help pages' links and samples, and the OpenAPI document's server all come
 * from here. A host that is not a plain host (plainHost) is not written anywhere; the address the
 * request came in on is used instead.
 */
export function baseUrl(req: IncomingMessage, publicUrl: string | null, trust: TrustedProxies = NO_PROXIES): string {
  return publicBase(req, trust, publicUrl);
}

const HTML = 'text/html; charset=utf-8';

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  const headers: Record<string, string | number> = {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
  };
  if (type === HTML) headers['Content-Security-Policy'] = HELP_CSP;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The help page's query names, matched ignoring case as ASP.NET reads query strings. */
const HELP_NAMES = namesIgnoringCase(['op', 'disco', 'wsdl']);

type HelpAsk = { readonly kind: 'wsdl' } | { readonly kind: 'disco' } | { readonly kind: 'page'; readonly op: string };

/**
 * What a GET of the service's address asks for. `?WSDL`, `?disco` and `?op=NAME` take their names
 * in any case; a request naming more than one of them, or `op` twice, is a 400 (the answer must not
 * depend on their order); bad percent-encoding is MALFORMED_REQUEST (from parseForm). Other
 * parameters are ignored.
 */
export function helpAsk(qs: string): HelpAsk {
  const q = parseForm(qs, HELP_NAMES, 'query names are matched ignoring case');
  const named = ['wsdl', 'disco', 'op'].filter((n) => q[n] !== undefined);
  if (named.length > 1) {
    throw new LookupError(
      'INVALID_PARAMETER',
      `The query names ${named.map((n) => (n === 'op' ? '?op=' : `?${n}`)).join(' and ')}; ask for one of ?WSDL, ?disco or ?op=NAME`,
    );
  }
  const op = q.op;
  if (q.wsdl !== undefined) return { kind: 'wsdl' };
  if (q.disco !== undefined) return { kind: 'disco' };
  return { kind: 'page', op: typeof op === 'string' ? op : '' };
}

export function helpRouter(deps: HelpDeps): express.Router {
  const router = express.Router({ caseSensitive: false });
  const served = new Map<string, string>();
  // Read once, on the first page asked for; the WSDL was checked against the catalogue at start-up.
  let read: Promise<ContractModel> | undefined;
  const model = (): Promise<ContractModel> => (read ??= readContract(deps.wsdl));
  const linksFor = (req: IncomingMessage): PageLinks => {
    const base = baseUrl(req, deps.publicUrl, deps.trustProxy);
    const address = base + SOAP_PATH;
    return {
      address,
      path: new URL(address).pathname,
      wsdl: `${address}?WSDL`,
      disco: `${address}?disco`,
      openapi: base + OPENAPI_PATH,
    };
  };

  router.all(SOAP_PATH, (req, res, next) => {
    // Every failure is answered: a LookupError as its one line, anything else through the app's
    // error handler (logged, INTERNAL_ERROR). Nothing here may leave a request unanswered.
    const failed = (e: unknown): void => {
      if (e instanceof LookupError) sendPlainError(req, res, e);
      else next(e);
    };
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        note(req, { transport: 'other' });
        sendPlainError(
          req,
          res,
          new LookupError(
            'METHOD_NOT_ALLOWED',
            `${req.method} is not allowed on ${SOAP_PATH}; SOAP requests are POSTs`,
          ),
          { Allow: 'GET, HEAD, POST' },
        );
        return;
      }
      note(req, { transport: 'help' });
      const ask = helpAsk(queryString(req.url));
      if (ask.kind === 'wsdl') {
        note(req, { transport: 'wsdl' });
        const base = baseUrl(req, deps.publicUrl, deps.trustProxy);
        let text = served.get(base);
        if (text === undefined) {
          text = wsdlFor(deps.wsdl, base);
          if (served.size >= MAX_CACHED) served.clear();
          served.set(base, text);
        }
        res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
        res.end(req.method === 'HEAD' ? undefined : text);
        return;
      }
      model()
        .then((m) => {
          const links = linksFor(req);
          if (ask.kind === 'disco') {
            send(req, res, 200, 'text/xml; charset=utf-8', discoDocument(m, deps.namespace, links.address));
            return;
          }
          // ?op= absent or empty: the service page; naming an operation: its page; anything else: 404.
          if (ask.op === '') {
            send(req, res, 200, HTML, servicePage(m, OPERATIONS, deps.namespace, links));
            return;
          }
          const op: Operation | undefined = findOperation(ask.op);
          if (op)
            send(
              req,
              res,
              200,
              HTML,
              operationPage(m, op, operationSamples(m, op, deps.namespace, links.address), links),
            );
          else send(req, res, 404, HTML, unknownOperationPage(m, suggestOperation(ask.op), links));
        })
        .catch(failed);
    } catch (e) {
      failed(e);
    }
  });
  return router;
}
