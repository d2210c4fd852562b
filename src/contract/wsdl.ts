// Loads the hand-written WSDL, puts the configured namespace in, checks that it and the operation
// catalogue agree (start-up refuses on any difference), and serves it with the caller's address.

import fs from 'node:fs';
import path from 'node:path';
import { parseStringPromise } from 'xml2js';
import { DEFAULT_NAMESPACE } from '../config';
import { OPERATIONS } from './operations';
import { escapeAttr } from '../core/xmltext';

export const WSDL_FILE = path.resolve(__dirname, '..', '..', 'wsdl', 'reg.wsdl');
export const SOAP_PATH = '/api/reg.asmx';
const PLACEHOLDER_ADDRESS = 'http://localhost/api/reg.asmx';

export class ContractError extends Error {}

/** The WSDL text with the configured target namespace (the file is written with the default one). */
export function loadWsdl(namespace: string, file = WSDL_FILE): string {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes(PLACEHOLDER_ADDRESS))
    throw new ContractError(`${file}: no port address '${PLACEHOLDER_ADDRESS}' to fill in`);
  return namespace === DEFAULT_NAMESPACE ? text : text.split(DEFAULT_NAMESPACE).join(namespace);
}

/** The WSDL as served: every port's address set to base + /api/reg.asmx. */
export function wsdlFor(wsdl: string, baseUrl: string): string {
  return wsdl.split(PLACEHOLDER_ADDRESS).join(escapeAttr(baseUrl + SOAP_PATH));
}

type Node = Record<string, unknown> & { $?: Record<string, string> };

function list(n: unknown, key: string): Node[] {
  const v = (n as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(v) ? (v as Node[]) : [];
}

function local(qname: string | undefined): string {
  return (qname ?? '').replace(/^.*:/, '');
}

/** Every difference between the WSDL and the catalogue, as readable lines (empty when they agree). */
export async function contractDifferences(wsdl: string, namespace: string): Promise<string[]> {
  const problems: string[] = [];
  const doc = (await parseStringPromise(wsdl, { explicitArray: true })) as Record<string, Node | undefined>;
  const defs = doc['wsdl:definitions'] as Node;
  if (!defs) return ['the root element is not wsdl:definitions'];
  if (defs.$?.targetNamespace !== namespace)
    problems.push(`targetNamespace is '${defs.$?.targetNamespace}', expected '${namespace}'`);

  const schema = list(list(defs, 'wsdl:types')[0], 's:schema')[0];
  const elements = new Map(list(schema, 's:element').map((e) => [e.$?.name ?? '', e]));
  const sequenceOf = (e: Node | undefined) =>
    list(list(list(e, 's:complexType')[0], 's:sequence')[0], 's:element').map((x) => ({
      name: x.$?.name ?? '',
      type: x.$?.type ?? '',
    }));
  const messages = new Map(
    list(defs, 'wsdl:message').map((m) => [m.$?.name ?? '', list(m, 'wsdl:part').map((p) => p.$ ?? {})]),
  );

  const catalogue = new Set(OPERATIONS.map((o) => o.name));
  const requestNames = [...elements.keys()].filter(
    (n) => !n.endsWith('Response') && n !== 'Vehicle' && n !== 'UKMOTData',
  );
  for (const n of requestNames)
    if (!catalogue.has(n)) problems.push(`request element '${n}' has no operation in the catalogue`);

  for (const op of OPERATIONS) {
    const req = sequenceOf(elements.get(op.name));
    if (!elements.has(op.name)) problems.push(`${op.name}: no request element`);
    else if (req.map((r) => r.name).join(',') !== op.params.join(',')) {
      problems.push(
        `${op.name}: request parameters are (${req.map((r) => r.name).join(', ')}), catalogue has (${op.params.join(', ')})`,
      );
    }
    const resp = sequenceOf(elements.get(`${op.name}Response`));
    if (resp.length !== 1 || resp[0].name !== `${op.name}Result` || local(resp[0].type) !== op.result) {
      problems.push(`${op.name}: response element must hold one ${op.name}Result of type ${op.result}`);
    }
    for (const v of ['HttpGet', 'HttpPost']) {
      const parts = messages.get(`${op.name}${v}In`)?.map((p) => p.name) ?? [];
      if (parts.join(',') !== op.params.join(','))
        problems.push(`${op.name}: message ${op.name}${v}In parts are (${parts.join(', ')})`);
      const out = messages.get(`${op.name}${v}Out`)?.[0];
      if (local(out?.element) !== op.result)
        problems.push(`${op.name}: message ${op.name}${v}Out must carry element ${op.result}`);
    }
  }

  for (const pt of list(defs, 'wsdl:portType')) {
    const names = list(pt, 'wsdl:operation').map((o) => o.$?.name ?? '');
    const missing = OPERATIONS.filter((o) => !names.includes(o.name)).map((o) => o.name);
    const extra = names.filter((n) => !catalogue.has(n));
    if (missing.length) problems.push(`portType ${pt.$?.name}: missing ${missing.join(', ')}`);
    if (extra.length) problems.push(`portType ${pt.$?.name}: not in the catalogue: ${extra.join(', ')}`);
  }

  const bindings = list(defs, 'wsdl:binding');
  const kinds = { 'soap:binding': 0, 'soap12:binding': 0, 'http:binding': 0 };
  for (const b of bindings) {
    const ops = list(b, 'wsdl:operation');
    const soapPrefix = 'soap:binding' in b ? 'soap' : 'soap12:binding' in b ? 'soap12' : null;
    if (soapPrefix) kinds[`${soapPrefix}:binding` as 'soap:binding']++;
    else if ('http:binding' in b) kinds['http:binding']++;
    const names = ops.map((o) => o.$?.name ?? '');
    const missing = OPERATIONS.filter((o) => !names.includes(o.name)).map((o) => o.name);
    if (missing.length) problems.push(`binding ${b.$?.name}: missing ${missing.join(', ')}`);
    for (const o of ops) {
      const name = o.$?.name ?? '';
      if (!catalogue.has(name)) problems.push(`binding ${b.$?.name}: operation ${name} is not in the catalogue`);
      if (soapPrefix) {
        const action = list(o, `${soapPrefix}:operation`)[0]?.$?.soapAction;
        if (action !== `${namespace}/${name}`)
          problems.push(`binding ${b.$?.name}: ${name} has soapAction '${action}', expected '${namespace}/${name}'`);
      } else {
        const location = list(o, 'http:operation')[0]?.$?.location;
        if (location !== `/${name}`)
          problems.push(`binding ${b.$?.name}: ${name} has location '${location}', expected '/${name}'`);
      }
    }
  }
  if (kinds['soap:binding'] !== 1 || kinds['soap12:binding'] !== 1 || kinds['http:binding'] !== 2) {
    problems.push('expected exactly one SOAP 1.1 binding, one SOAP 1.2 binding and two HTTP bindings');
  }
  return problems;
}

/** Throws a ContractError naming every difference, so the server refuses to start. */
export async function assertContract(wsdl: string, namespace: string): Promise<void> {
  const problems = await contractDifferences(wsdl, namespace);
  if (problems.length) {
    throw new ContractError(`The WSDL and the operation catalogue disagree:\n  - ${problems.join('\n  - ')}`);
  }
}
