// SOAP 1.1 and 1.2 at POST /api/reg.asmx. Each request is read within the body limit, screened by
// the XML guard, checked for version, operation and SOAPAction, and then handed to node-soap
// (soap.listen), one listener per SOAP version, which parses it against the WSDL, calls the
// service and writes the envelope. Results and faults are rendered by us and passed in as _xml.

import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import * as soap from 'soap';
import { findOperation, OPERATIONS, type Operation } from '../contract/operations';
import { SOAP_PATH } from '../contract/wsdl';
import { stackOf } from '../core/errors';
import { asLookupError, LookupError, quote } from '../service/errors';
import { bodyIfArrived, checkCharset, decodeUtf8, parseMediaType, readBody, type MediaType } from './body';
import { contextOf, note, noteUsername } from './context';
import { callerOf } from './forwarded';
import { sendPlainError } from './plain';
import { resultInner } from './answers';
import { escapeAttr, escapeText, soapResponseXml } from './xml';
import { scanEnvelope, XmlRejected } from './xmlguard';
import { lookupFailure, type TransportDeps } from './lookup';

const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
export type SoapVersion = '1.1' | '1.2';

const ENVELOPE_NS: Record<SoapVersion, string> = { '1.1': SOAP11_NS, '1.2': SOAP12_NS };
/** The Content-Type of a SOAP message, request or answer, of each version. */
export const SOAP_CONTENT_TYPE: Readonly<Record<SoapVersion, string>> = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8',
};
const CONTENT_TYPE = SOAP_CONTENT_TYPE;

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

function faultCode(version: SoapVersion, err: LookupError): string {
  const role = err.spec.role;
  if (version === '1.1') return `soap:${role}`;
  return `soap:${role === 'Client' ? 'Sender' : role === 'Server' ? 'Receiver' : role}`;
}

/** <soap:Fault> with the code, a readable message and <detail><ErrorCode> in the service namespace. */
function faultXml(version: SoapVersion, namespace: string, err: LookupError): string {
  const detail = `<ErrorCode xmlns="${escapeAttr(namespace)}">${err.code}</ErrorCode>`;
  const message = escapeText(err.message);
  if (version === '1.1') {
    return `<soap:Fault><faultcode>${faultCode(version, err)}</faultcode><faultstring>${message}</faultstring><detail>${detail}</detail></soap:Fault>`;
  }
  return (
    `<soap:Fault><soap:Code><soap:Value>${faultCode(version, err)}</soap:Value>` +
    `<soap:Subcode><soap:Value xmlns:rl="${escapeAttr(namespace)}">rl:${err.code}</soap:Value></soap:Subcode></soap:Code>` +
    `<soap:Reason><soap:Text xml:lang="en">${message}</soap:Text></soap:Reason><soap:Detail>${detail}</soap:Detail></soap:Fault>`
  );
}

/**
 * A whole SOAP message around one Body element. Faults are written with it, and the help pages'
 * samples. A result's envelope is node-soap's: it also declares the WSDL's prefixes (tm:, tns:) and
 * otherwise holds the same elements, which test/integration/help.test.ts checks.
 */
export function soapEnvelope(version: SoapVersion, body: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
}

function faultDocument(version: SoapVersion, namespace: string, err: LookupError): string {
  return soapEnvelope(version, faultXml(version, namespace, err));
}

function sendFault(res: ServerResponse, version: SoapVersion, namespace: string, err: LookupError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = faultDocument(version, namespace, err);
  const headers: Record<string, string | number> = {
    'Content-Type': CONTENT_TYPE[version],
    'Content-Length': Buffer.byteLength(body),
  };
  if (err.retryAfter) headers['Retry-After'] = err.retryAfter;
  if (err.code === 'PAYLOAD_TOO_LARGE') headers.Connection = 'close';
  res.writeHead(err.code === 'PAYLOAD_TOO_LARGE' ? 413 : 500, headers);
  res.end(body);
}

function unquote(s: string): string {
  const t = s.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/** Why this request cannot go to node-soap, as a LookupError; the operation it names otherwise. */
function screen(
  version: SoapVersion,
  xml: string,
  req: IncomingMessage,
  media: MediaType,
  deps: TransportDeps,
): Operation {
  let shape;
  try {
    shape = scanEnvelope(xml, deps.limits);
  } catch (e) {
    if (e instanceof XmlRejected) throw new LookupError('MALFORMED_REQUEST', `Malformed request: ${e.message}`);
    throw e;
  }
  if (shape.root.local !== 'Envelope')
    throw new LookupError('MALFORMED_REQUEST', `The root element is ${quote(shape.root.local)}, not a SOAP Envelope`);
  if (shape.root.ns !== ENVELOPE_NS[version]) {
    const other: SoapVersion = version === '1.1' ? '1.2' : '1.1';
    const msg =
      shape.root.ns === ENVELOPE_NS[other]
        ? `A SOAP ${other} envelope must be sent with Content-Type ${CONTENT_TYPE[other].split(';')[0]}, not ${media.type}`
        : `The envelope namespace ${quote(shape.root.ns, 80)} is neither SOAP 1.1 nor SOAP 1.2`;
    throw new LookupError('VERSION_MISMATCH', msg);
  }
  if (shape.mustUnderstand.length > 0) {
    const h = shape.mustUnderstand[0];
    throw new LookupError(
      'MUST_UNDERSTAND',
      `Header ${quote(`{${h.ns}}${h.local}`, 120)} is marked mustUnderstand, and this service processes no SOAP headers`,
    );
  }
  if (!shape.hasBody) throw new LookupError('MALFORMED_REQUEST', 'The envelope has no Body');
  if (!shape.operation)
    throw new LookupError(
      'MALFORMED_REQUEST',
      `The Body is empty; it must hold one operation element such as <Check xmlns="${deps.namespace}">`,
    );
  if (shape.bodyElements > 1)
    throw new LookupError('MALFORMED_REQUEST', 'The Body must hold exactly one operation element');
  const { local, ns } = shape.operation;
  const op = findOperation(local);
  if (!op) throw new LookupError('UNKNOWN_OPERATION', `Unknown operation ${quote(local)}`);
  if (ns !== deps.namespace) {
    throw new LookupError(
      'UNKNOWN_OPERATION',
      `Operation element ${quote(local)} is in namespace ${quote(ns, 80)}; this service's namespace is '${deps.namespace}'`,
    );
  }
  const actions: string[] = [];
  const header = req.headers.soapaction;
  if (typeof header === 'string') actions.push(unquote(header));
  const param = media.params.get('action');
  if (version === '1.2' && param !== undefined) actions.push(param);
  for (const action of actions) {
    if (action === '' || action === `${deps.namespace}/${op.name}`) continue;
    const named = action.startsWith(`${deps.namespace}/`)
      ? findOperation(action.slice(deps.namespace.length + 1))
      : undefined;
    throw new LookupError(
      'UNKNOWN_OPERATION',
      named
        ? `SOAPAction names ${named.name} but the Body holds ${op.name}`
        : `SOAPAction ${quote(action, 80)} is not one this service offers (expected '${deps.namespace}/${op.name}')`,
    );
  }
  return op;
}

/**
 * A lookup as SOAP answers it: the Body's content, or the LookupError it failed with, already noted
 * for the access log (and logged when internal). Both paths below call it: node-soap's and the direct one.
 */
function lookupBody(
  op: Operation,
  params: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  deps: TransportDeps,
): Promise<string> {
  // Noted before validation, so that the access log names the caller of a refused request too.
  noteUsername(req, params.username);
  return deps.service.lookup(op, params, callerOf(req, deps.trustProxy), contextOf(req)).then(
    (result) => soapResponseXml(op.name, deps.namespace, resultInner(result, 'soap')),
    (e: unknown) => {
      const err = lookupFailure(req, e, op.name, deps.logger);
      note(req, { errorCode: err.code });
      if (err.retryAfter) res.setHeader('Retry-After', err.retryAfter);
      throw err;
    },
  );
}

/** node-soap's service object: one method per catalogue operation, for every port of the WSDL. */
function soapServices(version: SoapVersion, deps: TransportDeps): soap.IServices {
  const methods: Record<string, soap.ISoapServiceMethod> = {};
  for (const op of OPERATIONS) {
    methods[op.name] = (args: unknown, _cb: unknown, _headers: unknown, req: IncomingMessage, res: ServerResponse) =>
      lookupBody(op, (args ?? {}) as Record<string, unknown>, req, res, deps).then(
        (xml) => ({ _xml: xml }),
        (err: LookupError) => {
          // node-soap answers a thrown { Fault } object as the fault it describes (its server's
          // convention, not an Error): our own XML, with our status.
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          throw {
            Fault: {
              faultcode: faultCode(version, err),
              _xml: faultXml(version, deps.namespace, err),
              statusCode: err.spec.status === 413 ? 413 : 500,
            },
          };
        },
      );
  }
  return { Reg: { RegSoap: methods, RegSoap12: methods } };
}

/** What soap.listen gives back: the request listener, and the envelope's start as node-soap writes it. */
interface Listening {
  readonly listener: Listener;
  /**
   * `<?xml ...?><soap:Envelope ...><soap:Body>` byte for byte as node-soap begins an answer, or null if it could not be
   * read.
   */
  readonly envelopeStart: string | null;
}

/** soap.listen on a private emitter: we take its request listener and call it for screened requests. */
function listen(version: SoapVersion, wsdl: string, deps: TransportDeps): Promise<Listening> {
  const host = new EventEmitter() as unknown as Server;
  return new Promise((resolve, reject) => {
    const server = soap.listen(host, {
      path: SOAP_PATH,
      services: soapServices(version, deps),
      xml: wsdl,
      forceSoap12Headers: version === '1.2',
      enableChunkedEncoding: false,
      suppressStack: true,
      returnFault: true,
      callback: (err: unknown) => {
        if (err) return reject(err instanceof Error ? err : new Error('soap.listen could not start', { cause: err }));
        const listener = host.listeners('request')[0] as Listener | undefined;
        if (!listener) return reject(new Error('soap.listen attached no request listener'));
        // node-soap's Server._envelope: the envelope's namespace, then the WSDL's own prefixes (tm:, tns:).
        const xmlns = (server as unknown as { wsdl?: { xmlnsInEnvelope?: unknown } }).wsdl?.xmlnsInEnvelope;
        const envelopeStart =
          typeof xmlns === 'string'
            ? `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ENVELOPE_NS[version]}" ${xmlns}><soap:Body>`
            : null;
        resolve({ listener, envelopeStart });
      },
    });
  });
}

// The common request, served without node-soap: an envelope holding nothing but an optional XML
// declaration, the Body and the operation element, whose children are plain elements with plain
// text (no attributes, prefixes, entities, comments or CDATA, each name once). node-soap would make
// of them exactly { name: trimmed text } (every parameter of the WSDL is an s:string); anything
// else, however valid, still goes to node-soap. The guard (xmlguard.ts) has already checked the
// envelope's names and namespaces, so this only takes the values out.
const SIMPLE_ENVELOPE =
  /^\s*(?:<\?xml[^?<>]*\?>)?\s*<([A-Za-z_][\w.-]*):Envelope(?:\s[^<>]*)?>\s*<\1:Body\s*>\s*<(?:[A-Za-z_][\w.-]*:)?([A-Za-z]\w*)(?:\s[^<>]*)?>([^]*?)<\/(?:[A-Za-z_][\w.-]*:)?\2\s*>\s*<\/\1:Body\s*>\s*<\/\1:Envelope\s*>\s*$/;
const SIMPLE_CHILD = /\s*<([A-Za-z]\w*)>([^<&\r]*)<\/\1>/y;

/** The operation's parameters as node-soap would give them, when the envelope is that simple; null otherwise. */
export function simpleParams(xml: string, operation: string): Record<string, string> | null {
  const m = SIMPLE_ENVELOPE.exec(xml);
  if (!m || m[2] !== operation) return null;
  const inner = m[3];
  const params: Record<string, string> = {};
  SIMPLE_CHILD.lastIndex = 0;
  let at = 0;
  while (at < inner.length) {
    const c = SIMPLE_CHILD.exec(inner);
    if (!c) return /^\s*$/.test(inner.slice(at)) ? params : null;
    const value = c[2].trim();
    if (value === '' || Object.prototype.hasOwnProperty.call(params, c[1])) return null;
    params[c[1]] = value;
    at = SIMPLE_CHILD.lastIndex;
  }
  return params;
}

/** Answers a simple request directly, in the bytes and status node-soap would have sent. */
function serveDirect(
  version: SoapVersion,
  envelopeStart: string,
  op: Operation,
  params: Record<string, string>,
  req: IncomingMessage,
  res: ServerResponse,
  deps: TransportDeps,
): void {
  const send = (status: number, body: string) => {
    res.statusCode = status;
    res.setHeader('Content-Type', CONTENT_TYPE[version]);
    res.end(envelopeStart + body + ENVELOPE_END);
  };
  lookupBody(op, params, req, res, deps)
    .then(
      (xml) => send(200, xml),
      (e: unknown) => {
        // A LookupError was noted and logged by lookupBody; anything else (an answer that could not be written) is new.
        const err = e instanceof LookupError ? e : lookupFailure(req, e, op.name, deps.logger);
        if (err !== e) note(req, { errorCode: err.code });
        send(err.spec.status === 413 ? 413 : 500, faultXml(version, deps.namespace, err));
      },
    )
    .catch(() => res.destroy());
}
const ENVELOPE_END = '</soap:Body></soap:Envelope>';

function soapVersionOf(media: MediaType): SoapVersion | null {
  return media.type === 'text/xml' ? '1.1' : media.type === 'application/soap+xml' ? '1.2' : null;
}

/**
 * node-soap answers its own failures (a parse error, an exception in its object builder) with its
 * own text or fault. The guard stops every known trigger; this is the net behind it: a 5xx that is
 * not one of our faults is logged and replaced by an INTERNAL_ERROR fault.
 */
function netUnderNodeSoap(
  req: IncomingMessage,
  res: ServerResponse,
  version: SoapVersion,
  deps: TransportDeps,
  marker: string,
): void {
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    res.end = end as typeof res.end;
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '';
    if (res.statusCode >= 500 && !res.headersSent && !text.includes(marker)) {
      deps.logger.error('node-soap failed on a screened request', { body: text.slice(0, 2000) });
      note(req, { errorCode: 'INTERNAL_ERROR' });
      sendFault(res, version, deps.namespace, LookupError.internal());
      return res;
    }
    return end(chunk);
  }) as typeof res.end;
}

/** The handler for POST /api/reg.asmx. */
export async function createSoapHandler(wsdl: string, deps: TransportDeps): Promise<Listener> {
  const listening: Record<SoapVersion, Listening> = {
    '1.1': await listen('1.1', wsdl, deps),
    '1.2': await listen('1.2', wsdl, deps),
  };
  const marker = `<ErrorCode xmlns="${escapeAttr(deps.namespace)}">`;

  return (req, res) => {
    const media = parseMediaType(req.headers['content-type']);
    const version = soapVersionOf(media);
    if (!version) {
      note(req, { transport: 'other' });
      sendPlainError(
        req,
        res,
        new LookupError(
          'UNSUPPORTED_MEDIA_TYPE',
          `POST ${SOAP_PATH} takes a SOAP envelope (text/xml for SOAP 1.1, application/soap+xml for SOAP 1.2); HTTP POST calls go to ${SOAP_PATH}/{Operation}`,
        ),
      );
      return;
    }
    note(req, { transport: version === '1.1' ? 'soap11' : 'soap12' });
    const fail = (e: unknown) => {
      const err = asLookupError(e);
      if (err.code === 'INTERNAL_ERROR') deps.logger.error('soap request failed', { error: stackOf(e) });
      note(req, { errorCode: err.code });
      sendFault(res, version, deps.namespace, err);
    };
    try {
      checkCharset(media);
    } catch (e) {
      fail(e);
      return;
    }
    const serve = (buf: Buffer) => {
      try {
        if (buf.length === 0)
          throw new LookupError('MALFORMED_REQUEST', 'The request body is empty; send a SOAP envelope');
        const xml = decodeUtf8(buf);
        const op = screen(version, xml, req, media, deps);
        note(req, { operation: op.name });
        req.url = SOAP_PATH;
        req.headers['content-type'] = CONTENT_TYPE[version];
        const { listener, envelopeStart } = listening[version];
        const params = envelopeStart === null ? null : simpleParams(xml, op.name);
        if (params !== null) return serveDirect(version, envelopeStart as string, op, params, req, res, deps);
        (req as IncomingMessage & { body?: string }).body = xml;
        netUnderNodeSoap(req, res, version, deps, marker);
        listener(req, res);
      } catch (e) {
        fail(e);
      }
    };
    let arrived: Buffer | null;
    try {
      arrived = bodyIfArrived(req, deps.limits.maxBodyBytes);
    } catch (e) {
      fail(e);
      return;
    }
    if (arrived !== null) serve(arrived);
    else readBody(req, deps.limits.maxBodyBytes).then(serve, fail);
  };
}
