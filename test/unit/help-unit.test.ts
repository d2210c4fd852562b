// The pieces of the help pages, the JSON API and the vehicle images on their own, each against a
// hand-written example or the WSDL: the sample messages of an operation page (README, Help pages:
// "sample request and answer for SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST with placeholders
// (`string`, `integer`; lists shown with two items)"; the elements and their order from the WSDL's
// types), the query of the service address (README: ?op=, ?disco, ?WSDL in any case, one of them),
// the Basic credentials of the JSON API (README, JSON API), the UKMOT JSON body (README: Tests as
// an array of objects, FailureReasons and Advisories arrays of strings, ExtendedInformation an
// array of arrays), and the image name (README, Vehicle images: canonical base64 of 1-80 printable
// UTF-8 characters).

import fs from 'node:fs';
import path from 'node:path';
import { findOperation } from '../../src/contract/operations';
import { readContract, type ContractModel } from '../../src/contract/schema';
import { LookupError } from '../../src/service/errors';
import { helpAsk } from '../../src/transport/help';
import { imageSvg, imageText } from '../../src/transport/image';
import { basicUsername, resultJson } from '../../src/transport/json';
import { indentXml, operationSamples } from '../../src/transport/samples';

const WSDL = fs.readFileSync(path.resolve(__dirname, '../../wsdl/reg.wsdl'), 'utf8');
const NS = 'http://regcheck.org.uk';
const ADDRESS = 'http://example.com:8080/base/api/reg.asmx';

function refused(f: () => unknown): LookupError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LookupError);
    return e as LookupError;
  }
  throw new Error('nothing was thrown');
}

let model: ContractModel;
beforeAll(async () => {
  model = await readContract(WSDL);
});

/** The vehicleData sequence as the WSDL declares it: [name, type] in its order. */
function vehicleDataFields(): Array<[string, string]> {
  const seq = /<s:complexType name="vehicleData">\s*<s:sequence>([\s\S]*?)<\/s:sequence>/.exec(WSDL)![1];
  return [...seq.matchAll(/name="([^"]+)" type="tns:([^"]+)"/g)].map((m) => [m[1], m[2]]);
}

/** The placeholder lines of vehicleData's fields at an indentation, as ASMX shows them: integer for IntegerValue, string for TextValue, a Composite's two values. */
function vehicleDataLines(pad: string): string[] {
  const fields = vehicleDataFields();
  // The WSDL's order, written out by hand as a check on the reading above.
  expect(fields.map(([n]) => n)).toEqual([
    'ABICode', 'Description', 'RegistrationYear', 'ManufactureYearFrom', 'ManufactureYearTo', 'CarMake', 'CarModel', 'BodyStyle', 'EngineSize',
    'NumberOfDoors', 'Transmission', 'FuelType', 'MakeDescription', 'ModelDescription', 'Immobiliser', 'NumberOfSeats', 'IndicativeValue', 'DriverSide',
  ]);
  return fields.flatMap(([name, type]) => {
    if (type === 'IntegerValue') return [`${pad}<${name}>integer</${name}>`];
    if (type === 'TextValue') return [`${pad}<${name}>string</${name}>`];
    expect(type).toBe('Composite');
    return [`${pad}<${name}>`, `${pad}  <CurrentValue>integer</CurrentValue>`, `${pad}  <CurrentTextValue>string</CurrentTextValue>`, `${pad}</${name}>`];
  });
}

describe('operationSamples: the four sample messages of an operation page', () => {
  test('CheckUSA, served under a path prefix and a port: every request and answer as written out here', () => {
    const samples = operationSamples(model, findOperation('CheckUSA')!, NS, ADDRESS);
    expect(samples.map((s) => [s.id, s.title])).toEqual([
      ['soap11', 'SOAP 1.1'],
      ['soap12', 'SOAP 1.2'],
      ['get', 'HTTP GET'],
      ['post', 'HTTP POST'],
    ]);
    const [soap11, soap12, get, post] = samples;
    const requestEnvelope = (soapNs: string) =>
      [
        '<?xml version="1.0" encoding="utf-8"?>',
        `<soap:Envelope xmlns:soap="${soapNs}">`,
        '  <soap:Body>',
        '    <CheckUSA xmlns="http://regcheck.org.uk">',
        '      <RegistrationNumber>string</RegistrationNumber>',
        '      <State>string</State>',
        '      <username>string</username>',
        '    </CheckUSA>',
        '  </soap:Body>',
        '</soap:Envelope>',
      ].join('\n');
    const answerEnvelope = (soapNs: string) =>
      [
        '<?xml version="1.0" encoding="utf-8"?>',
        `<soap:Envelope xmlns:soap="${soapNs}">`,
        '  <soap:Body>',
        '    <CheckUSAResponse xmlns="http://regcheck.org.uk" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
        '      <CheckUSAResult>',
        '        <vehicleJson>string</vehicleJson>',
        '        <vehicleData>',
        ...vehicleDataLines('          '),
        '        </vehicleData>',
        '      </CheckUSAResult>',
        '    </CheckUSAResponse>',
        '  </soap:Body>',
        '</soap:Envelope>',
      ].join('\n');
    const S11 = 'http://schemas.xmlsoap.org/soap/envelope/';
    const S12 = 'http://www.w3.org/2003/05/soap-envelope';
    expect(soap11.request).toBe(
      'POST /base/api/reg.asmx HTTP/1.1\nHost: example.com:8080\nContent-Type: text/xml; charset=utf-8\nContent-Length: length\nSOAPAction: "http://regcheck.org.uk/CheckUSA"\n\n' +
        requestEnvelope(S11),
    );
    expect(soap11.response).toBe('HTTP/1.1 200 OK\nContent-Type: text/xml; charset=utf-8\nContent-Length: length\n\n' + answerEnvelope(S11));
    expect(soap12.request).toBe(
      'POST /base/api/reg.asmx HTTP/1.1\nHost: example.com:8080\nContent-Type: application/soap+xml; charset=utf-8\nContent-Length: length\n\n' + requestEnvelope(S12),
    );
    expect(soap12.response).toBe('HTTP/1.1 200 OK\nContent-Type: application/soap+xml; charset=utf-8\nContent-Length: length\n\n' + answerEnvelope(S12));
    const httpAnswer = [
      'HTTP/1.1 200 OK',
      'Content-Type: text/xml; charset=utf-8',
      'Content-Length: length',
      '',
      '<?xml version="1.0" encoding="utf-8"?>',
      '<Vehicle xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="http://regcheck.org.uk">',
      '  <vehicleJson>string</vehicleJson>',
      '  <vehicleData>',
      ...vehicleDataLines('    '),
      '  </vehicleData>',
      '</Vehicle>',
    ].join('\n');
    expect(get.request).toBe('GET /base/api/reg.asmx/CheckUSA?RegistrationNumber=string&State=string&username=string HTTP/1.1\nHost: example.com:8080');
    expect(get.response).toBe(httpAnswer);
    expect(post.request).toBe(
      'POST /base/api/reg.asmx/CheckUSA HTTP/1.1\nHost: example.com:8080\nContent-Type: application/x-www-form-urlencoded\nContent-Length: length\n\nRegistrationNumber=string&State=string&username=string',
    );
    expect(post.response).toBe(httpAnswer);
  });

  test('UKMOT: the lists shown with two items, the optional Model in the WSDL order', () => {
    const [, , get, post] = operationSamples(model, findOperation('UKMOT')!, NS, 'https://reg.example.com/api/reg.asmx');
    expect(get.request).toBe('GET /api/reg.asmx/UKMOT?RegistrationNumber=string&Model=string&username=string HTTP/1.1\nHost: reg.example.com');
    const test = [
      '    <UKTest>',
      '      <TestDate>string</TestDate>',
      '      <ExpiryDate>string</ExpiryDate>',
      '      <Result>string</Result>',
      '      <Odometer>string</Odometer>',
      '      <TestNumber>string</TestNumber>',
      '      <FailureReasons>',
      '        <string>string</string>',
      '        <string>string</string>',
      '      </FailureReasons>',
      '      <Advisories>',
      '        <string>string</string>',
      '        <string>string</string>',
      '      </Advisories>',
      '    </UKTest>',
    ];
    const row = ['    <ArrayOfString>', '      <string>string</string>', '      <string>string</string>', '    </ArrayOfString>'];
    expect(post.response).toBe(
      [
        'HTTP/1.1 200 OK',
        'Content-Type: text/xml; charset=utf-8',
        'Content-Length: length',
        '',
        '<?xml version="1.0" encoding="utf-8"?>',
        '<UKMOTData xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="http://regcheck.org.uk">',
        '  <Tests>',
        ...test,
        ...test,
        '  </Tests>',
        '  <taxDate>string</taxDate>',
        '  <Json>string</Json>',
        '  <ExtendedInformation>',
        ...row,
        ...row,
        '  </ExtendedInformation>',
        '  <ExtendedInformationJson>string</ExtendedInformationJson>',
        '</UKMOTData>',
      ].join('\n'),
    );
  });

  test('a namespace with markup characters is escaped in the samples, and the SOAPAction names it', () => {
    const [soap11] = operationSamples(model, findOperation('Check')!, 'urn:a&b', ADDRESS);
    expect(soap11.request).toContain('SOAPAction: "urn:a&b/Check"');
    expect(soap11.request).toContain('<Check xmlns="urn:a&amp;b">');
    expect(soap11.response).toContain('<CheckResponse xmlns="urn:a&amp;b" xmlns:xsi=');
  });
});

describe('indentXml', () => {
  test('one element a line, two spaces a level; an element holding only text, or nothing, stays on its line', () => {
    expect(indentXml('<?xml version="1.0"?><a><b>t</b><c/><d></d><e><f>x</f></e></a>')).toBe(
      ['<?xml version="1.0"?>', '<a>', '  <b>t</b>', '  <c/>', '  <d></d>', '  <e>', '    <f>x</f>', '  </e>', '</a>'].join('\n'),
    );
  });

  test('text between elements gets its own line; closing more than was opened does not go below the margin', () => {
    expect(indentXml('<a>text<b/></a>')).toBe(['<a>', '  text', '  <b/>', '</a>'].join('\n'));
    expect(indentXml('</x></y><z>1</z>')).toBe(['</x>', '</y>', '<z>1</z>'].join('\n'));
    expect(indentXml('<a><b>1</b></a><c>2</c>')).toBe(['<a>', '  <b>1</b>', '</a>', '<c>2</c>'].join('\n'));
    expect(indentXml('')).toBe('');
  });

  test('an element whose text is followed by another element is opened, not closed on its line', () => {
    expect(indentXml('<a>t<b>u</b></a>')).toBe(['<a>', '  t', '  <b>u</b>', '</a>'].join('\n'));
    expect(indentXml('<a><b/><c>x</c></a>')).toBe(['<a>', '  <b/>', '  <c>x</c>', '</a>'].join('\n'));
  });
});

describe('helpAsk: what GET /api/reg.asmx asks for (README, Help pages)', () => {
  test('?WSDL, ?disco and ?op= in any case of the name; other parameters ignored', () => {
    for (const q of ['WSDL', 'wsdl', 'Wsdl', 'wsdl=1', 'x=1&WSDL']) expect(helpAsk(q)).toEqual({ kind: 'wsdl' });
    for (const q of ['disco', 'Disco', 'DISCO=']) expect(helpAsk(q)).toEqual({ kind: 'disco' });
    expect(helpAsk('OP=CheckUSA')).toEqual({ kind: 'page', op: 'CheckUSA' });
    expect(helpAsk('op=checkusa&lang=en')).toEqual({ kind: 'page', op: 'checkusa' });
    expect(helpAsk('')).toEqual({ kind: 'page', op: '' });
    expect(helpAsk('lang=en')).toEqual({ kind: 'page', op: '' });
  });

  test('two of them, in either order, or op twice, are INVALID_PARAMETER naming them', () => {
    for (const q of ['op=CheckUSA&disco', 'disco&op=CheckUSA']) {
      const e = refused(() => helpAsk(q));
      expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', 'The query names ?disco and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME']);
    }
    expect(refused(() => helpAsk('wsdl&disco')).message).toBe('The query names ?wsdl and ?disco; ask for one of ?WSDL, ?disco or ?op=NAME');
    expect(refused(() => helpAsk('op=A&WSDL')).message).toBe('The query names ?wsdl and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME');
    expect(refused(() => helpAsk('wsdl&disco&op=A')).message).toBe('The query names ?wsdl and ?disco and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME');
    expect(refused(() => helpAsk('op=CheckUSA&op=UKMOT')).code).toBe('INVALID_PARAMETER');
  });

  test('bad percent-encoding is MALFORMED_REQUEST', () => {
    for (const q of ['op=%FF', 'op=%']) expect(refused(() => helpAsk(q)).code).toBe('MALFORMED_REQUEST');
  });
});

describe('basicUsername (README, JSON API)', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

  test('the username of canonical credentials, the password ignored; without a colon the whole text', () => {
    expect(basicUsername(`Basic ${b64('demo:secret')}`)).toBe('demo');
    expect(basicUsername(`basic ${b64('demo:a:b')}`)).toBe('demo');
    expect(basicUsername(`Basic ${b64('demo')}`)).toBe('demo');
    expect(basicUsername(`Basic ${b64(':pw')}`)).toBe('');
    expect(basicUsername(` \tBASIC\t${b64('zoë:')} \t`)).toBe('zoë');
    expect(basicUsername('Basic')).toBe('');
  });

  test('no header, or another scheme, is no credentials', () => {
    expect(basicUsername(undefined)).toBeNull();
    expect(basicUsername('Bearer demo')).toBeNull();
    expect(basicUsername(`Basicx ${b64('demo:')}`)).toBeNull();
    expect(basicUsername(`Basic-Token ${b64('demo:')}`)).toBeNull();
  });

  test('anything else after Basic is MALFORMED_REQUEST with the README message', () => {
    for (const h of ['Basic !!!!', 'Basic ZGVt bzo=', 'Basic a, Basic b', 'Basic,', `Basic ${b64('demo:')}${b64('demo:')}`, 'Basic ZGVtbzp=', 'Basic ZGVtbzo', `Basic ${Buffer.from([0x64, 0xff]).toString('base64')}`]) {
      const e = refused(() => basicUsername(h));
      expect(e.code).toBe('MALFORMED_REQUEST');
      expect(e.message).toBe('The Basic credentials are not valid base64 of UTF-8 text; send one credential, Authorization: Basic base64(username:password)');
    }
  });
});

describe('resultJson: the JSON API 200 body', () => {
  test('a vehicle is its stored JSON text, byte for byte', () => {
    const payload = '{"Description":"FORD  FOCUS",  "CarMake":{"CurrentTextValue":"FORD"}}';
    expect(resultJson({ kind: 'Vehicle', payload })).toBe(payload);
  });

  test('UKMOT: the UKMOTData fields in the WSDL order, lists as arrays, a null string kept as null', () => {
    const payload = JSON.stringify({
      make: 'FORD',
      model: 'FOCUS',
      taxDate: '2027-03-01',
      tests: [{ TestDate: '2024-03-01', ExpiryDate: '2025-03-01', Result: 'Pass', Odometer: '41000', TestNumber: '123456789012', FailureReasons: [], Advisories: ['Tyre worn', null] }],
      extendedInformation: [['Colour', 'Blue'], []],
    });
    const tests = '[{"TestDate":"2024-03-01","ExpiryDate":"2025-03-01","Result":"Pass","Odometer":"41000","TestNumber":"123456789012","FailureReasons":[],"Advisories":["Tyre worn",null]}]';
    expect(resultJson({ kind: 'UKMOTData', payload })).toBe(
      '{"Tests":' +
        tests +
        ',"taxDate":"2027-03-01","Json":' +
        JSON.stringify(tests) +
        ',"ExtendedInformation":[["Colour","Blue"],[]],"ExtendedInformationJson":' +
        JSON.stringify('[["Colour","Blue"],[]]') +
        '}',
    );
  });

  test('UKMOT without tests or a tax date: empty arrays, no taxDate', () => {
    expect(resultJson({ kind: 'UKMOTData', payload: '{}' })).toBe('{"Tests":[],"Json":"[]","ExtendedInformation":[],"ExtendedInformationJson":"[]"}');
  });
});

const TEXT_REFUSED = 'The image name must encode 1 to 80 printable characters';

describe('the vehicle image (README, Vehicle images)', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

  test('1 to 80 printable characters, counted as characters, trimmed', () => {
    expect(imageText(b64('FORD FOCUS'))).toBe('FORD FOCUS');
    expect(imageText(b64('  FORD FOCUS '))).toBe('FORD FOCUS');
    expect(imageText(b64('A'.repeat(80)))).toBe('A'.repeat(80));
    // 80 four-byte characters: 320 bytes, 428 base64 characters, the longest name there is.
    const longest = b64('😀'.repeat(80));
    expect(longest.length).toBe(428);
    expect(imageText(longest)).toBe('😀'.repeat(80));
    expect(imageText(encodeURIComponent(b64('A??> B')))).toBe('A??> B');
    const msg = TEXT_REFUSED;
    for (const t of ['A'.repeat(81), '   ', 'FORD\u0000FOCUS', 'FORD\u2028FOCUS', 'FORD\u009fX']) {
      const e = refused(() => imageText(b64(t)));
      expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', msg]);
    }
    expect(imageText(b64('FORD\u00a0FOCUS'))).toBe('FORD\u00a0FOCUS');
  });

  test('the segment must be canonical base64 of UTF-8, at most 428 characters', () => {
    const shape = 'The image name must be @ and the base64 of at most 80 characters of "Make Model"';
    for (const s of ['', 'QUFB'.repeat(108), 'QUF', '!!!!', 'QU=B', 'QUFB====']) {
      const e = refused(() => imageText(s));
      expect([e.code, e.message]).toEqual(['INVALID_PARAMETER', shape]);
    }
    // 428 characters of base64 is within the bound (the length is checked before the text).
    expect(refused(() => imageText('QUFB'.repeat(107))).message).toBe(TEXT_REFUSED);
    const nc = refused(() => imageText('Rk9SRCBGT0NVUx=='));
    expect([nc.code, nc.message]).toEqual(['INVALID_PARAMETER', 'The image name is not canonical base64']);
    const nu = refused(() => imageText(Buffer.from([0xfe, 0x41, 0x42]).toString('base64')));
    expect([nu.code, nu.message]).toEqual(['INVALID_PARAMETER', 'The image name does not encode UTF-8 text']);
    const pe = refused(() => imageText('%FF%FE'));
    expect([pe.code, pe.message]).toEqual(['MALFORMED_REQUEST', 'The image name is not valid percent-encoded UTF-8']);
  });

  test('a segment over three times the bound is refused before it is decoded; up to it, percent-encoding is decoded', () => {
    const long = refused(() => imageText('%'.repeat(1285)));
    expect([long.code, long.message]).toEqual(['INVALID_PARAMETER', 'The image name is longer than 428 characters']);
    // 1284 characters: decoded (and here found not to be percent-encoding).
    expect(refused(() => imageText('%'.repeat(1284))).code).toBe('MALFORMED_REQUEST');
    // 'QUFB' percent-encoded, 3 characters a character: 107 * 4 * 3 = 1284 characters, accepted.
    const encoded = [...'QUFB'.repeat(107)].map((c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).join('');
    expect(encoded.length).toBe(1284);
    expect(refused(() => imageText(encoded)).message).toBe(TEXT_REFUSED);
  });

  test('the picture: make on the first line, the rest of the name below, all escaped', () => {
    expect(imageSvg('LAND ROVER DEFENDER')).toBe(
      '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200" role="img" aria-label="LAND ROVER DEFENDER">' +
        '<title>LAND ROVER DEFENDER</title>' +
        '<rect width="320" height="200" fill="#e8eef4"/>' +
        '<rect x="40" y="120" width="240" height="36" rx="12" fill="#50627a"/>' +
        '<rect x="90" y="92" width="140" height="34" rx="10" fill="#6d829c"/>' +
        '<circle cx="95" cy="158" r="16" fill="#222"/><circle cx="225" cy="158" r="16" fill="#222"/>' +
        '<text x="160" y="42" text-anchor="middle" font-family="sans-serif" font-size="22" font-weight="bold" fill="#1d2b3a">LAND</text>' +
        '<text x="160" y="72" text-anchor="middle" font-family="sans-serif" font-size="18" fill="#1d2b3a">ROVER DEFENDER</text>' +
        '</svg>',
    );
    const one = imageSvg('TESLA');
    expect(one).toContain('fill="#1d2b3a">TESLA</text>');
    expect(one).toContain('font-size="18" fill="#1d2b3a"></text>');
    const hostile = imageSvg('<b>"x" &amp; y');
    expect(hostile).toContain('aria-label="&lt;b&gt;&quot;x&quot; &amp;amp; y"');
    expect(hostile).toContain('<title>&lt;b&gt;&quot;x&quot; &amp;amp; y</title>');
    expect(hostile).toContain('font-weight="bold" fill="#1d2b3a">&lt;b&gt;&quot;x&quot;</text>');
    expect(hostile).toContain('font-size="18" fill="#1d2b3a">&amp;amp; y</text>');
  });
});
