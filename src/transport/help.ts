// GET /api/reg.asmx, as ASMX answers it: the WSDL (?WSDL, any case) with the caller's address in
// every port; the DISCO document (?disco); a page per operation (?op=NAME: a test form and sample
// messages; a 404 page for a name the catalogue lacks); otherwise the service page listing the
// operations. The pages are written by pages.ts, the samples by samples.ts. Of the request only
// the host (checked by baseUrl) is written into them, escaped.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { OPERATIONS, findOperation, suggestOperation, type Operation } from '../contract/operations';
import { readContract, type ContractModel } from '../contract/schema';
import { SOAP_PATH, wsdlFor } from '../contract/wsdl';
import { asLookupError, LookupError } from '../service/errors';
import { note } from './context';
import { discoDocument } from './disco';
import { parseForm, queryString } from './http';
import { HELP_CSP, operationPage, servicePage, unknownOperationPage, type PageLinks } from './pages';
import { sendPlainError } from './plain';
import { operationSamples } from './samples';

export interface HelpDeps {
  readonly wsdl: string;
  readonly namespace: string;
  readonly publicUrl: string | null;
}

const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
const MAX_CACHED = 32;

/** Where the JSON API's OpenAPI document is served (issue #11), relative to the base URL. */
const OPENAPI_PATH = '/api/json.aspx/openapi.json';

/** The base URL a caller used (scheme and host), or PUBLIC_URL when set. */
export function baseUrl(req: IncomingMessage, publicUrl: string | null): string {
  if (publicUrl) return publicUrl;
  const host = req.headers.host;
  if (host && HOST_RE.test(host)) return `http://${host}`;
  const addr = req.socket.localAddress ?? '127.0.0.1';
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${req.socket.localPort ?? 80}`;
}

const HTML = 'text/html; charset=utf-8';

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  const headers: Record<string, string | number> = { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff' };
  if (type === HTML) headers['Content-Security-Policy'] = HELP_CSP;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function helpRouter(deps: HelpDeps): express.Router {
  const router = express.Router({ caseSensitive: false });
  const served = new Map<string, string>();
  // Read once, on the first page asked for; the WSDL was checked against the catalogue at start-up.
  let read: Promise<ContractModel> | undefined;
  const withModel = (ok: (m: ContractModel) => void, fail: (e: unknown) => void): void => {
    read ??= readContract(deps.wsdl);
    read.then(ok, fail);
  };
  const linksFor = (req: IncomingMessage): PageLinks => {
    const base = baseUrl(req, deps.publicUrl);
    const address = base + SOAP_PATH;
    let path = SOAP_PATH;
    try {
      path = new URL(address).pathname;
    } catch {
      // PUBLIC_URL is checked at start-up and baseUrl() writes only checked hosts; keep the plain path regardless.
    }
    return { address, path, wsdl: `${address}?WSDL`, disco: `${address}?disco`, openapi: base + OPENAPI_PATH };
  };

  router.all(SOAP_PATH, (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      note(req, { transport: 'other' });
      sendPlainError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${SOAP_PATH}; SOAP requests are POSTs`), { Allow: 'GET, HEAD, POST' });
      return;
    }
    const qs = queryString(req.url);
    if (/^wsdl(?:[=&]|$)/i.test(qs)) {
      note(req, { transport: 'wsdl' });
      const base = baseUrl(req, deps.publicUrl);
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
    if (/^disco(?:[=&]|$)/i.test(qs)) {
      note(req, { transport: 'help' });
      withModel(
        (m) => send(req, res, 200, 'text/xml; charset=utf-8', discoDocument(m, deps.namespace, linksFor(req).address)),
        (e: unknown) => sendPlainError(req, res, asLookupError(e)),
      );
      return;
    }
    note(req, { transport: 'help' });
    // ?op= absent or empty: the service page; naming an operation: its page; anything else: 404.
    let asked: unknown;
    try {
      asked = parseForm(qs).op;
    } catch {
      asked = undefined;
    }
    withModel(
      (m) => {
        const links = linksFor(req);
        if (asked === undefined || asked === '') {
          send(req, res, 200, HTML, servicePage(m, OPERATIONS, deps.namespace, links));
          return;
        }
        const op: Operation | undefined = typeof asked === 'string' ? findOperation(asked) : undefined;
        if (op) send(req, res, 200, HTML, operationPage(m, op, operationSamples(m, op, deps.namespace, links.address), links));
        else send(req, res, 404, HTML, unknownOperationPage(m, typeof asked === 'string' ? suggestOperation(asked) : undefined, links));
      },
      (e: unknown) => sendPlainError(req, res, asLookupError(e)),
    );
  });
  return router;
}
