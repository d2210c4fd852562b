// The XML guard checked against the parser behind it, in process: for an envelope the SOAP
// transport would hand on to node-soap, node-soap's reader must not throw (a throw there comes back
// to the caller as node-soap's own fault or a bare error line, not ours) nor pollute prototypes.

import { WSDL } from 'soap';
import { findOperation } from '../../src/contract/operations';
import { loadWsdl } from '../../src/contract/wsdl';
import { scanEnvelope, XmlRejected } from '../../src/transport/xmlguard';
import { NS, SOAP11, SOAP12 } from '../helpers/soap';

const DEFAULT_LIMITS = { maxDepth: 32, maxTextChars: 8192, maxElements: 1000, maxAttributes: 32 };

/** What the SOAP transport checks before node-soap sees a body: the guard, then screen() in soap.ts. */
export function reachesNodeSoap(xml: string): boolean {
  let shape;
  try {
    shape = scanEnvelope(xml, DEFAULT_LIMITS);
  } catch (e) {
    if (e instanceof XmlRejected) return false;
    throw e;
  }
  const op = shape.operation;
  return (
    shape.root.local === 'Envelope' &&
    (shape.root.ns === SOAP11 || shape.root.ns === SOAP12) &&
    shape.mustUnderstand.length === 0 &&
    shape.hasBody &&
    shape.bodyElements === 1 &&
    op !== null &&
    op.ns === NS &&
    findOperation(op.local) !== undefined
  );
}

/** node-soap's reader for our WSDL, as soap.listen builds it: returns why it failed on an envelope, or null. */
export async function nodeSoapReader(): Promise<(xml: string) => string | null> {
  const wsdl = new WSDL(loadWsdl(NS), '', { returnFault: true });
  await new Promise<void>((resolve, reject) => wsdl.onReady((err) => (err ? reject(err) : resolve())));
  return (xml) => {
    if (!reachesNodeSoap(xml)) return null;
    try {
      wsdl.xmlToObject(xml);
    } catch (e) {
      const f = (e as { Fault?: { detail?: string } }).Fault;
      return `the guard passed it, and node-soap threw ${f ? `a fault: ${f.detail}` : String(e)}\n  xml: ${JSON.stringify(xml)}`;
    }
    if (
      Object.prototype.hasOwnProperty.call(Object.prototype, 'obj') ||
      Object.prototype.hasOwnProperty.call(Object.prototype, 'hrefs')
    ) {
      return `Object.prototype was polluted\n  xml: ${JSON.stringify(xml)}`;
    }
    return null;
  };
}
