// Reading the help pages the way an integrator does: the README's demo plates, a sample message
// cut out of an operation page, its placeholders filled in, and the element shape of an XML answer.

import fs from 'node:fs';
import path from 'node:path';
import { parseStringPromise } from 'xml2js';

import { README } from './readme';

export { README };
export const WSDL_TEXT = fs.readFileSync(path.resolve(__dirname, '../../wsdl/reg.wsdl'), 'utf8');

/** The operations the WSDL's SOAP portType declares, in its order. */
export function wsdlOperations(): string[] {
  const portType = /<wsdl:portType name="RegSoap">([\s\S]*?)<\/wsdl:portType>/.exec(WSDL_TEXT)?.[1] ?? '';
  return [...portType.matchAll(/<wsdl:operation name="([^"]+)"/g)].map((m) => m[1]);
}

export interface DemoPlate {
  readonly registration: string;
  /** `State=CA` in the README's third column, for the three state operations. */
  readonly state?: { readonly param: string; readonly value: string };
}

/** The README's demo plate for an operation (the table under *Calling it*). */
export function readmeDemo(operation: string): DemoPlate {
  const row = new RegExp(`^\\| \`${operation}\` \\| ([^|]*)\\| ([^|]*)\\|`, 'm').exec(README);
  if (!row) throw new Error(`README has no demo plate row for ${operation}`);
  const registration = /`([^`]+)`/.exec(row[1])?.[1];
  if (!registration) throw new Error(`README's demo row for ${operation} names no registration`);
  const st = /`([A-Za-z]+)=([^`]+)`/.exec(row[2]);
  return st ? { registration, state: { param: st[1], value: st[2] } } : { registration };
}

/** The values a demo lookup sends: the README's plate and state, username `demo`; other parameters are left out. */
export function demoValues(operation: string): Record<string, string> {
  const d = readmeDemo(operation);
  const out: Record<string, string> = { RegistrationNumber: d.registration, username: 'demo' };
  if (d.state) out[d.state.param] = d.state.value;
  return out;
}

export function unescapeHtml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

export interface HttpMessage {
  readonly startLine: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A sample message of an operation page (`<pre id="soap11-request">` etc.), as text. */
export function sampleOf(page: string, id: string): HttpMessage {
  const m = new RegExp(`<pre id="${id}"[^>]*>([\\s\\S]*?)</pre>`).exec(page);
  if (!m) throw new Error(`no sample ${id} on the page`);
  const text = unescapeHtml(m[1]);
  const blank = text.indexOf('\n\n');
  const head = blank === -1 ? text : text.slice(0, blank);
  const [startLine, ...lines] = head.split('\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const c = l.indexOf(': ');
    headers[l.slice(0, c)] = l.slice(c + 2);
  }
  return { startLine, headers, body: blank === -1 ? '' : text.slice(blank + 2) };
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A SOAP request body with each parameter element's placeholder replaced; elements without a value are removed. */
export function fillEnvelope(body: string, values: Record<string, string>): string {
  return body.replace(/\n *<([A-Za-z]+)>string<\/\1>/g, (_all, name: string) =>
    name in values ? _all.replace('>string<', `>${escapeXml(values[name])}<`) : '',
  );
}

/** A query string or form body with each placeholder replaced; parameters without a value are removed. */
export function fillQuery(query: string, values: Record<string, string>): string {
  return query
    .split('&')
    .map((pair) => decodeURIComponent(pair.split('=')[0]))
    .filter((name) => name in values)
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(values[name])}`)
    .join('&');
}

/**
 * Where every element of an XML document sits: its path of {namespace}names, and the order of each element's children.
 */
export interface Shape {
  readonly paths: Set<string>;
  /** path -> for each element at that path, its children's names with repeats run together. */
  readonly children: Map<string, string[][]>;
  /** path -> the texts of the leaf elements at that path (absent for xsi:nil ones). */
  readonly texts: Map<string, string[]>;
}

interface XmlNode {
  '#name': string;
  $ns?: { uri: string; local: string };
  $?: Record<string, { value: string; local: string; uri: string }>;
  $$?: XmlNode[];
  _?: string;
}

export async function shapeOf(xml: string): Promise<Shape> {
  const doc = (await parseStringPromise(xml, {
    explicitChildren: true,
    preserveChildrenOrder: true,
    xmlns: true,
    explicitArray: true,
  })) as Record<string, XmlNode>;
  const shape: Shape = { paths: new Set(), children: new Map(), texts: new Map() };
  const walk = (node: XmlNode, parent: string) => {
    const name = `{${node.$ns?.uri ?? ''}}${node.$ns?.local ?? node['#name']}`;
    const p = `${parent}/${name}`;
    shape.paths.add(p);
    const kids = node.$$ ?? [];
    const seq: string[] = [];
    for (const k of kids) {
      const n = `{${k.$ns?.uri ?? ''}}${k.$ns?.local ?? k['#name']}`;
      if (seq[seq.length - 1] !== n) seq.push(n);
    }
    shape.children.set(p, [...(shape.children.get(p) ?? []), seq]);
    // A value the record lacks: xsi:nil in SOAP, an empty element with type="null" in the HTTP forms.
    const nil = Object.values(node.$ ?? {}).some(
      (a) => (a.local === 'nil' && a.value === 'true') || (a.local === 'type' && a.value === 'null'),
    );
    if (kids.length === 0 && !nil) shape.texts.set(p, [...(shape.texts.get(p) ?? []), node._ ?? '']);
    for (const k of kids) walk(k, p);
  };
  const rootName = Object.keys(doc)[0];
  walk({ ...doc[rootName], '#name': rootName }, '');
  return shape;
}

/** True when `seq` is `of` with some items left out. */
export function isSubsequence(seq: readonly string[], of: readonly string[]): boolean {
  let i = 0;
  for (const x of of) if (i < seq.length && seq[i] === x) i++;
  return i === seq.length;
}
