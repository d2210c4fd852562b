// Escaping text for XML, for everything that writes XML: the answers (transport/xml.ts), the pages,
// and the WSDL's addresses (contract/wsdl.ts). Text escapes only & < > so that a '"' in vehicleJson
// stays a '"' for callers who cut it out with a regex; attributes escape '"' too.

export function escapeText(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
