// GET /api/reg.asmx?disco: the DISCO document ASMX services publish, for tools that discover a
// service from its address (Visual Studio's "Add Web Reference", wsdl.exe /disco): a contractRef
// to the WSDL and one soap element per SOAP binding, with its address.

import type { ContractModel } from '../contract/schema';
import { XSD_NS, XSI_NS, escapeAttr } from './xml';

const DISCO_NS = 'http://schemas.xmlsoap.org/disco/';
const SCL_NS = 'http://schemas.xmlsoap.org/disco/scl/';
const DISCO_SOAP_NS = 'http://schemas.xmlsoap.org/disco/soap/';

/** The DISCO document for the service at `address` (the WSDL's port address). */
export function discoDocument(model: ContractModel, namespace: string, address: string): string {
  const a = escapeAttr(address);
  const ns = escapeAttr(namespace);
  const soap = (n: number, binding: string) =>
    `  <soap address="${a}" xmlns:q${n}="${ns}" binding="q${n}:${escapeAttr(binding)}" xmlns="${DISCO_SOAP_NS}" />\r\n`;
  return (
    `<?xml version="1.0" encoding="utf-8"?>\r\n` +
    `<discovery xmlns:xsd="${XSD_NS}" xmlns:xsi="${XSI_NS}" xmlns="${DISCO_NS}">\r\n` +
    `  <contractRef ref="${a}?wsdl" docRef="${a}" xmlns="${SCL_NS}" />\r\n` +
    soap(1, model.bindings.soap11) +
    soap(2, model.bindings.soap12) +
    `</discovery>`
  );
}
