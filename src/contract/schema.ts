// What the help pages read from the WSDL beyond what the catalogue holds: the service's name and
// description, each operation's documentation, the names of the SOAP 1.1 and 1.2 bindings, and the
// schema's complex types (so a sample message has the shape the WSDL promises, not a copy of it).
// Read once, from the WSDL text the server already checked against the catalogue at start-up.

import { parseStringPromise } from 'xml2js';

/** One child element of a complex type's sequence. */
export interface SchemaElement {
  readonly name: string;
  /** The type's local name: a complex type of the schema, or an XML Schema type (`string`, `integer`). */
  readonly type: string;
  /** True when the type is one of the schema's own (tns:), false for an XML Schema built-in (s:). */
  readonly own: boolean;
  readonly repeated: boolean;
}

/** A complex type: a sequence of elements, or simple content over an XML Schema type. */
export type SchemaType =
  | { readonly kind: 'sequence'; readonly elements: readonly SchemaElement[] }
  | { readonly kind: 'simple'; readonly base: string };

export interface ContractModel {
  readonly serviceName: string;
  readonly serviceDocumentation: string;
  /** Operation name -> its wsdl:documentation in the SOAP portType. */
  readonly documentation: ReadonlyMap<string, string>;
  /** The SOAP 1.1 and SOAP 1.2 bindings' names (for DISCO). */
  readonly bindings: { readonly soap11: string; readonly soap12: string };
  readonly types: ReadonlyMap<string, SchemaType>;
  /** Global element name -> its sequence (the request elements, `Check` etc.). */
  readonly elements: ReadonlyMap<string, readonly SchemaElement[]>;
}

type Node = Record<string, unknown> & { $?: Record<string, string>; _?: string };

function list(n: unknown, key: string): Node[] {
  const v = (n as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(v) ? (v as Node[]) : [];
}

function textOf(n: Node | string | undefined): string {
  if (typeof n === 'string') return n.trim();
  return (n?._ ?? '').trim();
}

function qname(q: string | undefined): { local: string; own: boolean } {
  const s = q ?? '';
  const colon = s.indexOf(':');
  return { local: colon === -1 ? s : s.slice(colon + 1), own: s.startsWith('tns:') };
}

function sequence(n: Node | undefined): SchemaElement[] {
  return list(list(n, 's:sequence')[0], 's:element').map((e) => {
    const t = qname(e.$?.type);
    return { name: e.$?.name ?? '', type: t.local, own: t.own, repeated: e.$?.maxOccurs === 'unbounded' };
  });
}

/** Reads the parts of the WSDL the help pages show. The WSDL is the one assertContract accepted. */
export async function readContract(wsdl: string): Promise<ContractModel> {
  const doc = (await parseStringPromise(wsdl, { explicitArray: true })) as Record<string, Node | undefined>;
  const defs = doc['wsdl:definitions'] as Node;
  const schema = list(list(defs, 'wsdl:types')[0], 's:schema')[0];

  const types = new Map<string, SchemaType>();
  for (const t of list(schema, 's:complexType')) {
    const simple = list(list(t, 's:simpleContent')[0], 's:extension')[0];
    types.set(
      t.$?.name ?? '',
      simple ? { kind: 'simple', base: qname(simple.$?.base).local } : { kind: 'sequence', elements: sequence(t) },
    );
  }
  const elements = new Map<string, SchemaElement[]>();
  for (const e of list(schema, 's:element')) {
    const inline = list(e, 's:complexType')[0];
    if (inline) elements.set(e.$?.name ?? '', sequence(inline));
  }

  const documentation = new Map<string, string>();
  const soapPortType = list(defs, 'wsdl:portType')[0];
  for (const o of list(soapPortType, 'wsdl:operation')) {
    const d = list(o, 'wsdl:documentation')[0];
    if (d) documentation.set(o.$?.name ?? '', textOf(d));
  }

  const bindings = list(defs, 'wsdl:binding');
  const named = (kind: string) => bindings.find((b) => kind in b)?.$?.name ?? '';
  const service = list(defs, 'wsdl:service')[0];
  return {
    serviceName: service?.$?.name ?? 'Service',
    serviceDocumentation: textOf(list(service, 'wsdl:documentation')[0]),
    documentation,
    bindings: { soap11: named('soap:binding'), soap12: named('soap12:binding') },
    types,
    elements,
  };
}
