// Writes a result tree as XML: compact inside a SOAP body, or as ASMX writes the HTTP forms (the
// declaration, a line break, two-space indentation, one element per line). Text escapes only
// & < > so that a '"' in vehicleJson stays a '"' for callers who cut it out with a regex.

import { escapeAttr, escapeText } from '../core/xmltext';
import type { XNode } from '../service/records';

export { escapeAttr, escapeText } from '../core/xmltext';

export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';

/** SOAP: absent values are xsi:nil (the prefix is declared on the response element). */
function compact(nodes: readonly XNode[], out: string[]): void {
  for (const n of nodes) {
    if (n.absent) out.push(`<${n.name} xsi:nil="true" />`);
    else if (n.children) {
      if (n.children.length === 0) out.push(`<${n.name} />`);
      else {
        out.push(`<${n.name}>`);
        compact(n.children, out);
        out.push(`</${n.name}>`);
      }
    } else out.push(`<${n.name}>${escapeText(n.text ?? '')}</${n.name}>`);
  }
}

/** Line break and indentation before an element at each depth, made once. */
const PADS: string[] = Array.from({ length: 8 }, (_, d) => '\r\n' + '  '.repeat(d));

/**
 * HTTP forms: absent values are empty elements carrying a type attribute. Written by concatenation
 * rather than into an array of parts joined at the end: every stored answer is made here at import.
 */
function indented(nodes: readonly XNode[], depth: number): string {
  const pad = PADS[depth] ?? '\r\n' + '  '.repeat(depth);
  let out = '';
  for (const n of nodes) {
    if (n.absent) out += pad + '<' + n.name + ' type="null" />';
    else if (n.children) {
      if (n.children.length === 0) out += pad + '<' + n.name + ' />';
      else out += pad + '<' + n.name + '>' + indented(n.children, depth + 1) + pad + '</' + n.name + '>';
    } else out += pad + '<' + n.name + '>' + escapeText(n.text ?? '') + '</' + n.name + '>';
  }
  return out;
}

/** A result's children as they sit inside a SOAP body's result element. */
export function soapResultInner(result: readonly XNode[]): string {
  const out: string[] = [];
  compact(result, out);
  return out.join('');
}

/** A result's children as they sit inside the root element of an HTTP GET/POST answer. */
export function httpResultInner(result: readonly XNode[]): string {
  return indented(result, 1);
}

/** `<{Op}Response><{Op}Result>...` for node-soap to place in the envelope's Body; inner from soapResultInner. */
export function soapResponseXml(operation: string, namespace: string, inner: string): string {
  return `<${operation}Response xmlns="${escapeAttr(namespace)}" xmlns:xsi="${XSI_NS}"><${operation}Result>${inner}</${operation}Result></${operation}Response>`;
}

/**
 * The HTTP GET/POST answer: the result element itself as the document root, no envelope; inner from httpResultInner.
 */
export function httpResultXml(root: string, namespace: string, inner: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>\r\n<${root} xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}" xmlns="${escapeAttr(namespace)}">${inner}\r\n</${root}>`;
}
