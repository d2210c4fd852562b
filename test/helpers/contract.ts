// The interface as wsdl/reg.wsdl states it, read by the tests themselves: a result type's fields in
// the order of its <s:sequence>, and what a record's vehicleData must hold field by field, worked
// out from the record and the README's import rules, never from the service's own field list.

import fs from 'node:fs';
import path from 'node:path';
import { parseStringPromise } from 'xml2js';

export const WSDL_FILE = path.resolve(__dirname, '../../wsdl/reg.wsdl');

export interface WsdlField {
  readonly name: string;
  /** The type without its prefix: IntegerValue, TextValue, Composite, string, ... */
  readonly type: string;
}

type Node = Record<string, unknown> & { $?: Record<string, string> };

let schema: Promise<Node> | null = null;

function schemaNode(): Promise<Node> {
  schema ??= parseStringPromise(fs.readFileSync(WSDL_FILE, 'utf8'), { explicitArray: true }).then((doc: Node) => {
    const defs = doc['wsdl:definitions'] as Node;
    const types = (defs['wsdl:types'] as Node[])[0];
    return (types['s:schema'] as Node[])[0];
  });
  return schema;
}

/**
 * The fields of a named complex type of the WSDL's schema, or of a top-level element's anonymous
 * type (an operation's request, say), in the order of its sequence.
 */
export async function wsdlSequence(typeName: string): Promise<WsdlField[]> {
  const s = await schemaNode();
  const named = (s['s:complexType'] as Node[]).find((c) => c.$?.name === typeName);
  const element = (s['s:element'] as Node[]).find((e) => e.$?.name === typeName);
  const t = named ?? (element?.['s:complexType'] as Node[] | undefined)?.[0];
  if (!t) throw new Error(`the WSDL has no complexType or element ${typeName}`);
  const seq = (t['s:sequence'] as Node[])[0];
  return (seq['s:element'] as Node[]).map((e) => ({ name: e.$!.name, type: e.$!.type.replace(/^\w+:/, '') }));
}

/** What one vehicleData field holds as a caller reads it: absent, a text, or a composite's two values (null: nil). */
export type FieldValue =
  | { kind: 'absent' }
  | { kind: 'text'; text: string }
  | { kind: 'composite'; value: string | null; text: string | null };

function textOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') return textOf((v as Record<string, unknown>).CurrentTextValue);
  return String(v);
}

/**
 * The README's import rules applied to one stored vehicle: integer fields take an integer or a
 * string of digits; text fields a string or a number (or a composite's CurrentTextValue);
 * composites {CurrentValue, CurrentTextValue} or a plain string, and are always written.
 */
export function expectedField(field: WsdlField, vehicle: Record<string, unknown>): FieldValue {
  const v = vehicle[field.name];
  if (field.type === 'Composite') {
    if (v === null || v === undefined) return { kind: 'composite', value: null, text: null };
    if (typeof v !== 'object') return { kind: 'composite', value: null, text: String(v) };
    const o = v as Record<string, unknown>;
    return {
      kind: 'composite',
      value: o.CurrentValue === null || o.CurrentValue === undefined ? null : String(o.CurrentValue),
      text: textOf(o.CurrentTextValue),
    };
  }
  if (v === null || v === undefined) return { kind: 'absent' };
  if (field.type === 'IntegerValue') return { kind: 'text', text: String(parseInt(String(v), 10)) };
  const t = textOf(v);
  return t === null ? { kind: 'absent' } : { kind: 'text', text: t };
}

/** An element parsed by xml2js (explicitArray false, xmlns true), read back as a FieldValue. */
export function actualField(node: unknown, composite: boolean): FieldValue {
  if (node === undefined) return { kind: 'absent' };
  const nilOrText = (n: unknown): string | null => {
    if (n === undefined) return null;
    if (typeof n === 'string') return n;
    const o = n as { _?: string; $?: Record<string, { value: string }> };
    const attrs = o.$ ?? {};
    const nil = Object.entries(attrs).some(
      ([k, a]) => (k === 'xsi:nil' && a.value === 'true') || (k === 'type' && a.value === 'null'),
    );
    return nil ? null : (o._ ?? '');
  };
  if (composite) {
    const o = node as Record<string, unknown>;
    return { kind: 'composite', value: nilOrText(o.CurrentValue), text: nilOrText(o.CurrentTextValue) };
  }
  const t = nilOrText(node);
  return t === null ? { kind: 'absent' } : { kind: 'text', text: t };
}
