// GET /api/reg.asmx: the WSDL (?WSDL, any case) with the caller's address in every port, or an
// ASMX-style help page listing the operations from the catalogue, each with a test form.
// Nothing from the request is written into the page unescaped.

import type { IncomingMessage } from 'node:http';
import express from 'express';
import { OPERATIONS, findOperation, type Operation } from '../contract/operations';
import { SOAP_PATH, wsdlFor } from '../contract/wsdl';
import { LookupError } from '../service/errors';
import type { TrustedProxies } from '../config';
import { note } from './context';
import { publicBase } from './forwarded';
import { parseForm, queryString } from './http';
import { sendPlainError } from './plain';
import { escapeAttr } from './xml';

export interface HelpDeps {
  readonly wsdl: string;
  readonly namespace: string;
  readonly publicUrl: string | null;
  /** Proxies whose X-Forwarded-Proto/-Host/-Prefix set the addresses written into the WSDL. */
  readonly trustProxy?: TrustedProxies;
}

const NO_PROXIES: TrustedProxies = { list: [], has: () => false };
const MAX_CACHED = 32;

function html(s: string): string {
  return escapeAttr(s).replace(/'/g, '&#39;');
}

/** The base URL a caller used (scheme, host, prefix behind a trusted proxy), or PUBLIC_URL when set. */
export function baseUrl(req: IncomingMessage, publicUrl: string | null, trust: TrustedProxies = NO_PROXIES): string {
  return publicBase(req, trust, publicUrl);
}

function operationSection(op: Operation, namespace: string): string {
  const inputs = op.params
    .map((p) => `<tr><td><label for="${html(op.name)}-${p}">${p}</label></td><td><input id="${html(op.name)}-${p}" name="${p}" type="text"></td></tr>`)
    .join('');
  const example = op.params.map((p) => `${p}=${p === 'username' ? 'demo' : '...'}`).join('&amp;');
  return (
    `<h2 id="${html(op.name)}">${html(op.name)}</h2><p>${html(op.country)}; returns ${op.result}.</p>` +
    `<form method="GET" action="${SOAP_PATH}/${html(op.name)}"><table>${inputs}</table><button type="submit">Invoke (HTTP GET)</button></form>` +
    `<p><code>GET ${SOAP_PATH}/${html(op.name)}?${example}</code><br><code>SOAPAction: "${html(namespace)}/${html(op.name)}"</code></p>`
  );
}

function helpPage(namespace: string, only?: Operation): string {
  const ops = only ? [only] : OPERATIONS;
  const index = only ? '' : `<ul>${OPERATIONS.map((o) => `<li><a href="?op=${html(o.name)}">${html(o.name)}</a> (${html(o.country)})</li>`).join('')}</ul>`;
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>reglookup: ${SOAP_PATH}</title></head><body>` +
    `<h1>Vehicle registration lookup</h1><p>Namespace <code>${html(namespace)}</code>. ` +
    `Service description: <a href="${SOAP_PATH}?WSDL">${SOAP_PATH}?WSDL</a>. Every operation answers SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST.</p>` +
    `${index}${ops.map((o) => operationSection(o, namespace)).join('')}</body></html>`
  );
}

export function helpRouter(deps: HelpDeps): express.Router {
  const router = express.Router({ caseSensitive: false });
  const served = new Map<string, string>();

  router.all(SOAP_PATH, (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      note(req, { transport: 'other' });
      sendPlainError(req, res, new LookupError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${SOAP_PATH}; SOAP requests are POSTs`), { Allow: 'GET, HEAD, POST' });
      return;
    }
    const qs = queryString(req.url);
    if (/^wsdl(?:[=&]|$)/i.test(qs)) {
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
    note(req, { transport: 'help' });
    let only: Operation | undefined;
    try {
      const op = parseForm(qs).op;
      if (typeof op === 'string') only = findOperation(op);
    } catch {
      only = undefined;
    }
    const page = helpPage(deps.namespace, only);
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': Buffer.byteLength(page),
      'Content-Security-Policy': "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'",
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : page);
  });
  return router;
}
