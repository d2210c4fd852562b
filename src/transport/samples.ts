// Sample messages for an operation's help page, as ASMX shows them: a request and an answer for
// SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST, with the type's name (`string`) where a value goes.
// Nothing here is a copy of a message: the answer's elements come from the WSDL's schema types and
// are written by the writers that write real answers (xml.ts, the envelope of soap.ts); the request
// is the catalogue's parameters in the WSDL's request element. Only the SOAP envelopes are indented
// for reading (real ones are sent on one line); the HTTP answers are shown byte for byte.

import type { Operation } from '../contract/operations';
import type { ContractModel, SchemaElement } from '../contract/schema';
import type { XNode } from '../service/records';
import { SOAP_CONTENT_TYPE, soapEnvelope, type SoapVersion } from './soap';
import { escapeAttr, httpResultInner, httpResultXml, soapResponseXml, soapResultInner } from './xml';

export type SampleId = 'soap11' | 'soap12' | 'get' | 'post';

export interface Sample {
  readonly id: SampleId;
  readonly title: string;
  readonly request: string;
  readonly response: string;
}

// A type that contains itself would never end; the WSDL has none, and this bounds a future one.
const MAX_DEPTH = 12;

/**
 * The children of an element of the given complex type, each value its type's name; lists show two items, as ASMX's
 * samples do.
 */
function placeholders(model: ContractModel, type: string, depth = 0): XNode[] {
  const t = model.types.get(type);
  if (!t || t.kind !== 'sequence' || depth > MAX_DEPTH) return [];
  return t.elements.flatMap((e) => {
    const node = placeholderOf(model, e, depth);
    return e.repeated ? [node, node] : [node];
  });
}

function placeholderOf(model: ContractModel, e: SchemaElement, depth: number): XNode {
  if (!e.own) return { name: e.name, text: e.type };
  const t = model.types.get(e.type);
  if (t?.kind === 'simple') return { name: e.name, text: t.base };
  return { name: e.name, children: placeholders(model, e.type, depth + 1) };
}

/**
 * The result type's name as the WSDL's `{Op}Response` element declares it (the catalogue's `result`, checked at
 * start-up).
 */
function resultType(model: ContractModel, op: Operation): string {
  return model.elements.get(`${op.name}Response`)?.[0]?.type ?? op.result;
}

/** The request's parameters in WSDL order, each with its type's name as the value. */
function requestParams(model: ContractModel, op: Operation): Array<readonly [string, string]> {
  const declared = new Map((model.elements.get(op.name) ?? []).map((e) => [e.name, e.type]));
  return op.params.map((p) => [p, declared.get(p) ?? 'string'] as const);
}

/** Indents a compact XML document (elements and text, no mixed content) for reading: one element per line. */
export function indentXml(xml: string): string {
  const tokens = xml.match(/<[^>]*>|[^<]+/g) ?? [];
  const out: string[] = [];
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const pad = '  '.repeat(depth);
    if (t.startsWith('<?')) out.push(t);
    else if (t.startsWith('</')) {
      depth = Math.max(0, depth - 1);
      out.push('  '.repeat(depth) + t);
    } else if (!t.startsWith('<')) out.push(pad + t);
    else if (t.endsWith('/>')) out.push(pad + t);
    else if (tokens[i + 1]?.startsWith('</')) out.push(pad + t + tokens[++i]);
    else if (tokens[i + 2]?.startsWith('</') && !tokens[i + 1].startsWith('<')) {
      out.push(pad + t + tokens[i + 1] + tokens[i + 2]);
      i += 2;
    } else {
      out.push(pad + t);
      depth++;
    }
  }
  return out.join('\n');
}

function query(params: ReadonlyArray<readonly [string, string]>): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

function httpHead(lines: string[]): string {
  return lines.join('\n');
}

/**
 * The four samples for an operation served at `address` (the service's URL, as the WSDL gives it).
 * Content-Length is shown as the word `length`, as ASMX does: it depends on the values.
 */
export function operationSamples(model: ContractModel, op: Operation, namespace: string, address: string): Sample[] {
  const url = new URL(address);
  const path = url.pathname;
  const host = url.host;
  const params = requestParams(model, op);
  const result = resultType(model, op);
  const nodes = placeholders(model, result);

  const requestBody = `<${op.name} xmlns="${escapeAttr(namespace)}">${soapResultInner(params.map(([name, text]) => ({ name, text })))}</${op.name}>`;
  const soap = (version: SoapVersion, id: SampleId): Sample => {
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${host}`,
      `Content-Type: ${SOAP_CONTENT_TYPE[version]}`,
      'Content-Length: length',
    ];
    if (version === '1.1') head.push(`SOAPAction: "${namespace}/${op.name}"`);
    return {
      id,
      title: `SOAP ${version}`,
      request: `${httpHead(head)}\n\n${indentXml(soapEnvelope(version, requestBody))}`,
      response: `${httpHead(['HTTP/1.1 200 OK', `Content-Type: ${SOAP_CONTENT_TYPE[version]}`, 'Content-Length: length'])}\n\n${indentXml(
        soapEnvelope(version, soapResponseXml(op.name, namespace, soapResultInner(nodes))),
      )}`,
    };
  };
  const httpAnswer = `${httpHead(['HTTP/1.1 200 OK', 'Content-Type: text/xml; charset=utf-8', 'Content-Length: length'])}\n\n${httpResultXml(
    result,
    namespace,
    httpResultInner(nodes),
  ).replace(/\r\n/g, '\n')}`;
  return [
    soap('1.1', 'soap11'),
    soap('1.2', 'soap12'),
    {
      id: 'get',
      title: 'HTTP GET',
      request: httpHead([`GET ${path}/${op.name}?${query(params)} HTTP/1.1`, `Host: ${host}`]),
      response: httpAnswer,
    },
    {
      id: 'post',
      title: 'HTTP POST',
      request: `${httpHead([`POST ${path}/${op.name} HTTP/1.1`, `Host: ${host}`, 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: length'])}\n\n${query(params)}`,
      response: httpAnswer,
    },
  ];
}
