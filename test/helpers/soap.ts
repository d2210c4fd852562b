// Hand-built SOAP envelopes for tests that need exact control over the bytes on the wire.

import { findOperation } from '../../src/contract/operations';

export const NS = 'http://regcheck.org.uk';
export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

function xmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function envelope(version: '1.1' | '1.2', operation: string, params: Record<string, string>, ns = NS): string {
  const env = version === '1.1' ? SOAP11 : SOAP12;
  const children = Object.entries(params)
    .map(([k, v]) => `<${k}>${xmlText(v)}</${k}>`)
    .join('');
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><${operation} xmlns="${ns}">${children}</${operation}></soap:Body></soap:Envelope>`;
}

/** Headers a well-behaved client sends for this operation and version. */
export function soapHeaders(version: '1.1' | '1.2', operation: string, ns = NS): Record<string, string> {
  if (version === '1.1') return { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${ns}/${operation}"` };
  return { 'Content-Type': `application/soap+xml; charset=utf-8; action="${ns}/${operation}"` };
}

export function requireOp(name: string) {
  const op = findOperation(name);
  if (!op) throw new Error(`no operation ${name}`);
  return op;
}
