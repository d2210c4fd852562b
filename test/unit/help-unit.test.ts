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
import { basicUsername, jsonHandler, resultJson } from '../../src/transport/json';
import { creditsRouter } from '../../src/transport/credits';
import express from 'express';
import { setContext, type RequestContext } from '../../src/transport/context';
import { imageHandler } from '../../src/transport/image';
import { helpRouter } from '../../src/transport/help';
import type { AddressInfo } from 'node:net';
import type { LookupService } from '../../src/service/lookup';
import type { CreditsService } from '../../src/service/credits';
import type { Logger } from '../../src/ops/logger';
import { operationPage, servicePage, unknownOperationPage, type PageLinks } from '../../src/transport/pages';
import { indentXml, operationSamples } from '../../src/transport/samples';
import { resultInner } from '../../src/transport/answers';
import type { Operation } from '../../src/contract/operations';
import { refused } from '../helpers/refused';

const WSDL = fs.readFileSync(path.resolve(__dirname, '../../wsdl/reg.wsdl'), 'utf8');
const NS = 'http://regcheck.org.uk';
const ADDRESS = 'http://example.com:8080/base/api/reg.asmx';

let model: ContractModel;
beforeAll(async () => {
  model = await readContract(WSDL);
});

/** The vehicleData sequence as the WSDL declares it: [name, type] in its order. */
function vehicleDataFields(): Array<[string, string]> {
  const seq = /<s:complexType name="vehicleData">\s*<s:sequence>([\s\S]*?)<\/s:sequence>/.exec(WSDL)![1];
  return [...seq.matchAll(/name="([^"]+)" type="tns:([^"]+)"/g)].map((m) => [m[1], m[2]]);
}

/**
 * The placeholder lines of vehicleData's fields at an indentation, as ASMX shows them: integer for IntegerValue, string
 * for TextValue, a Composite's two values.
 */
function vehicleDataLines(pad: string): string[] {
  const fields = vehicleDataFields();
  // The WSDL's order, written out by hand as a check on the reading above.
  expect(fields.map(([n]) => n)).toEqual([
    'ABICode',
    'Description',
    'RegistrationYear',
    'ManufactureYearFrom',
    'ManufactureYearTo',
    'CarMake',
    'CarModel',
    'BodyStyle',
    'EngineSize',
    'NumberOfDoors',
    'Transmission',
    'FuelType',
    'MakeDescription',
    'ModelDescription',
    'Immobiliser',
    'NumberOfSeats',
    'IndicativeValue',
    'DriverSide',
  ]);
  return fields.flatMap(([name, type]) => {
    if (type === 'IntegerValue') return [`${pad}<${name}>integer</${name}>`];
    if (type === 'TextValue') return [`${pad}<${name}>string</${name}>`];
    expect(type).toBe('Composite');
    return [
      `${pad}<${name}>`,
      `${pad}  <CurrentValue>integer</CurrentValue>`,
      `${pad}  <CurrentTextValue>string</CurrentTextValue>`,
      `${pad}</${name}>`,
    ];
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
    expect(soap11.response).toBe(
      'HTTP/1.1 200 OK\nContent-Type: text/xml; charset=utf-8\nContent-Length: length\n\n' + answerEnvelope(S11),
    );
    expect(soap12.request).toBe(
      'POST /base/api/reg.asmx HTTP/1.1\nHost: example.com:8080\nContent-Type: application/soap+xml; charset=utf-8\nContent-Length: length\n\n' +
        requestEnvelope(S12),
    );
    expect(soap12.response).toBe(
      'HTTP/1.1 200 OK\nContent-Type: application/soap+xml; charset=utf-8\nContent-Length: length\n\n' +
        answerEnvelope(S12),
    );
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
    expect(get.request).toBe(
      'GET /base/api/reg.asmx/CheckUSA?RegistrationNumber=string&State=string&username=string HTTP/1.1\nHost: example.com:8080',
    );
    expect(get.response).toBe(httpAnswer);
    expect(post.request).toBe(
      'POST /base/api/reg.asmx/CheckUSA HTTP/1.1\nHost: example.com:8080\nContent-Type: application/x-www-form-urlencoded\nContent-Length: length\n\nRegistrationNumber=string&State=string&username=string',
    );
    expect(post.response).toBe(httpAnswer);
  });

  test('UKMOT: the lists shown with two items, the optional Model in the WSDL order', () => {
    const [, , get, post] = operationSamples(
      model,
      findOperation('UKMOT')!,
      NS,
      'https://reg.example.com/api/reg.asmx',
    );
    expect(get.request).toBe(
      'GET /api/reg.asmx/UKMOT?RegistrationNumber=string&Model=string&username=string HTTP/1.1\nHost: reg.example.com',
    );
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
    const row = [
      '    <ArrayOfString>',
      '      <string>string</string>',
      '      <string>string</string>',
      '    </ArrayOfString>',
    ];
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

  test('a type that contains itself is written 13 levels deep and no deeper (the bound on a future WSDL)', () => {
    const loop: ContractModel = {
      ...model,
      types: new Map([
        ...model.types,
        ['Loop', { kind: 'sequence', elements: [{ name: 'Again', type: 'Loop', own: true, repeated: false }] }],
      ]),
      elements: new Map([
        ...model.elements,
        ['CheckResponse', [{ name: 'CheckResult', type: 'Loop', own: true, repeated: false }]],
      ]),
    };
    const [, , get] = operationSamples(loop, findOperation('Check')!, NS, ADDRESS);
    // 13 levels of Again: twelve holding the next, the thirteenth written empty.
    expect(get.response.match(/<Again>/g)).toHaveLength(12);
    expect(get.response.match(/<Again \/>/g)).toHaveLength(1);
    expect(get.response).toContain('<?xml version="1.0" encoding="utf-8"?>\n<Loop ');
  });

  test('a request element or result the WSDL lacks: parameters shown as string, the catalogue result named', () => {
    const bare: ContractModel = { ...model, elements: new Map() };
    const [, , get] = operationSamples(bare, findOperation('CheckUSA')!, NS, ADDRESS);
    expect(get.request.split('\n')[0]).toBe(
      'GET /base/api/reg.asmx/CheckUSA?RegistrationNumber=string&State=string&username=string HTTP/1.1',
    );
    expect(get.response).toContain('<?xml version="1.0" encoding="utf-8"?>\n<Vehicle xmlns:xsi=');
    const typed: ContractModel = {
      ...model,
      elements: new Map([
        ...model.elements,
        ['CheckUSA', [{ name: 'State', type: 'int', own: false, repeated: false }]],
      ]),
    };
    expect(operationSamples(typed, findOperation('CheckUSA')!, NS, ADDRESS)[2].request.split('\n')[0]).toBe(
      'GET /base/api/reg.asmx/CheckUSA?RegistrationNumber=string&State=int&username=string HTTP/1.1',
    );
  });

  test('a result element declared with no type: the catalogue result named', () => {
    const empty: ContractModel = { ...model, elements: new Map([...model.elements, ['CheckResponse', []]]) };
    const [, , get] = operationSamples(empty, findOperation('Check')!, NS, ADDRESS);
    expect(get.response).toContain('<?xml version="1.0" encoding="utf-8"?>\n<Vehicle xmlns:xsi=');
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
      [
        '<?xml version="1.0"?>',
        '<a>',
        '  <b>t</b>',
        '  <c/>',
        '  <d></d>',
        '  <e>',
        '    <f>x</f>',
        '  </e>',
        '</a>',
      ].join('\n'),
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
    expect(indentXml('<a><b></b></a>')).toBe(['<a>', '  <b></b>', '</a>'].join('\n'));
  });

  test('a document that stops after an open tag or its text is indented as far as it goes', () => {
    expect(indentXml('<a>')).toBe('<a>');
    expect(indentXml('<a>t')).toBe(['<a>', '  t'].join('\n'));
    expect(indentXml('<a><b>')).toBe(['<a>', '  <b>'].join('\n'));
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
      expect([e.code, e.message]).toEqual([
        'INVALID_PARAMETER',
        'The query names ?disco and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME',
      ]);
    }
    expect(refused(() => helpAsk('wsdl&disco')).message).toBe(
      'The query names ?wsdl and ?disco; ask for one of ?WSDL, ?disco or ?op=NAME',
    );
    expect(refused(() => helpAsk('op=A&WSDL')).message).toBe(
      'The query names ?wsdl and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME',
    );
    expect(refused(() => helpAsk('wsdl&disco&op=A')).message).toBe(
      'The query names ?wsdl and ?disco and ?op=; ask for one of ?WSDL, ?disco or ?op=NAME',
    );
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
    expect(basicUsername(`Bearer basic ${b64('demo:')}`)).toBeNull();
    expect(basicUsername('Bearer basic')).toBeNull();
    expect(basicUsername(`XBasic ${b64('demo:')}`)).toBeNull();
    expect(basicUsername(`Basic    ${b64('demo:')}`)).toBe('demo');
    expect(basicUsername(`Basic ${b64('demo:')}  `)).toBe('demo');
    expect(basicUsername(`  Basic ${b64('demo:')}`)).toBe('demo');
    expect(basicUsername(`Basic\t\t${b64('demo:')}\t\t`)).toBe('demo');
  });

  test('anything else after Basic is MALFORMED_REQUEST with the README message', () => {
    for (const h of [
      'Basic !!!!',
      'Basic ZGVt bzo=',
      'Basic a, Basic b',
      'Basic,',
      `Basic ${b64('demo:')}${b64('demo:')}`,
      'Basic ZGVtbzp=',
      'Basic ZGVtbzo',
      `Basic ${Buffer.from([0x64, 0xff]).toString('base64')}`,
    ]) {
      const e = refused(() => basicUsername(h));
      expect(e.code).toBe('MALFORMED_REQUEST');
      expect(e.message).toBe(
        'The Basic credentials are not valid base64 of UTF-8 text; send one credential, Authorization: Basic base64(username:password)',
      );
    }
  });
});

describe('resultJson: the JSON API 200 body', () => {
  test('a vehicle is its stored JSON text, byte for byte', () => {
    const payload = '{"Description":"FORD  FOCUS",  "CarMake":{"CurrentTextValue":"FORD"}}';
    expect(resultJson({ kind: 'Vehicle', payload, source: 'import', asOf: null })).toBe(payload);
  });

  test('UKMOT: the UKMOTData fields in the WSDL order, lists as arrays, a null string kept as null', () => {
    const payload = JSON.stringify({
      make: 'FORD',
      model: 'FOCUS',
      taxDate: '2027-03-01',
      tests: [
        {
          TestDate: '2024-03-01',
          ExpiryDate: '2025-03-01',
          Result: 'Pass',
          Odometer: '41000',
          TestNumber: '123456789012',
          FailureReasons: [],
          Advisories: ['Tyre worn', null],
        },
      ],
      extendedInformation: [['Colour', 'Blue'], []],
    });
    const tests =
      '[{"TestDate":"2024-03-01","ExpiryDate":"2025-03-01","Result":"Pass","Odometer":"41000","TestNumber":"123456789012","FailureReasons":[],"Advisories":["Tyre worn",null]}]';
    // 1 November 2026, 00:00 UTC.
    expect(resultJson({ kind: 'UKMOTData', payload, source: 'import', asOf: 1793491200000 })).toBe(
      '{"Tests":' +
        tests +
        ',"taxDate":"2027-03-01","Json":' +
        JSON.stringify(tests) +
        ',"ExtendedInformation":[["Colour","Blue"],[]],"ExtendedInformationJson":' +
        JSON.stringify('[["Colour","Blue"],[]]') +
        ',"AnswerSource":"import","AnswerAsOf":"2026-11-01T00:00:00Z"}',
    );
  });

  test('UKMOT without tests or a tax date: empty arrays, no taxDate', () => {
    expect(resultJson({ kind: 'UKMOTData', payload: '{}', source: 'dvsa', asOf: null })).toBe(
      '{"Tests":[],"Json":"[]","ExtendedInformation":[],"ExtendedInformationJson":"[]","AnswerSource":"dvsa","AnswerAsOf":null}',
    );
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

describe('the help pages as written (README, Help pages), against hand-written HTML', () => {
  const LINKS: PageLinks = {
    address: ADDRESS,
    path: '/base/api/reg.asmx',
    wsdl: `${ADDRESS}?WSDL`,
    disco: `${ADDRESS}?disco`,
    openapi: 'http://example.com:8080/base/api/json.aspx/openapi.json',
  };
  const noStyle = (page: string) => page.replace(/<style>[^<]*<\/style>/, '<style></style>');
  const HEAD = (title: string) =>
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style></style></head>\n<body>`;
  const BACK = '<p><a href="/base/api/reg.asmx">Click here for a complete list of operations.</a></p>';

  test('the service page: name and documentation from the WSDL, the three documents linked, every operation a line', () => {
    const page = noStyle(servicePage(model, [findOperation('CheckUSA')!, findOperation('UKMOT')!], NS, LINKS));
    expect(page).toBe(
      HEAD('Reg Web Service') +
        '<header><h1>Reg</h1><p>Vehicle registration lookup (reglookup)</p></header>\n<main>' +
        `<p>The following operations are supported. For a formal definition, please review the <a href="${ADDRESS}?WSDL">Service Description</a> (WSDL).</p>\n` +
        '<ul>' +
        `<li>Service description (WSDL): <a href="${ADDRESS}?WSDL">${ADDRESS}?WSDL</a></li>` +
        '<li>JSON API (OpenAPI document): <a href="http://example.com:8080/base/api/json.aspx/openapi.json">http://example.com:8080/base/api/json.aspx/openapi.json</a></li>' +
        `<li>Discovery document (DISCO): <a href="${ADDRESS}?disco">${ADDRESS}?disco</a></li>` +
        '</ul>\n' +
        `<p>Namespace <code>http://regcheck.org.uk</code>. Every operation answers SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST at <code>${ADDRESS}</code>.</p>\n` +
        '<h2>Operations</h2>\n<ul>\n' +
        '<li><a href="?op=CheckUSA">CheckUSA</a>: USA. Parameters: <code>RegistrationNumber</code>, <code>State</code>, <code>username</code>. Returns <code>Vehicle</code>.</li>\n' +
        '<li><a href="?op=UKMOT">UKMOT</a>: United Kingdom (MOT test history). Parameters: <code>RegistrationNumber</code>, <code>Model</code> (optional), <code>username</code>. Returns <code>UKMOTData</code>.</li>' +
        '\n</ul>\n</main></body></html>\n',
    );
  });

  test('the UKMOT page: what it does, its parameters, a labelled and described field each, the form to the operation, then the samples', () => {
    const op = findOperation('UKMOT')!;
    const page = noStyle(operationPage(model, op, operationSamples(model, op, NS, ADDRESS), LINKS));
    const field = (p: string, label: string, hint: string) =>
      `<div class="field"><label for="param-${p}">${label}</label><input id="param-${p}" name="${p}" type="text" autocomplete="off" spellcheck="false" aria-describedby="param-${p}-hint">` +
      `<span class="hint" id="param-${p}-hint">${hint}</span></div>`;
    const top =
      HEAD('Reg Web Service: UKMOT') +
      `<header><h1>Reg</h1>${BACK}</header>\n<main><h2>UKMOT</h2>\n` +
      '<p>Looks up the MOT tests of a UK registration and returns them as <code>UKMOTData</code>: each test with its failure reasons and advisories, the tax date, and extended information.</p>\n' +
      '<p>Parameters: <code>RegistrationNumber</code>, <code>Model</code> (optional), <code>username</code>. Returns <code>UKMOTData</code>.</p>\n' +
      '<h3>Test</h3>\n<p>To test the operation using the HTTP POST protocol, fill in the values and click <strong>Invoke</strong>. The answer is shown as it is sent: XML, or one line naming the error.</p>\n' +
      '<form method="post" action="/base/api/reg.asmx/UKMOT" accept-charset="utf-8">\n' +
      field(
        'RegistrationNumber',
        'RegistrationNumber',
        'As on the plate; case, spaces, hyphens and dots are ignored.',
      ) +
      '\n' +
      field(
        'Model',
        'Model (optional)',
        'Optional: the vehicle&#39;s make or model; a record that matches neither is not found.',
      ) +
      '\n' +
      field('username', 'username', 'Your username.') +
      '\n<button type="submit">Invoke</button>\n</form>\n';
    expect(page.startsWith(top)).toBe(true);
    const rest = page.slice(top.length);
    const esc = (t: string) =>
      t
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;');
    const sections = operationSamples(model, op, NS, ADDRESS)
      .map(
        (s) =>
          `<h3 id="${s.id}">${s.title}</h3>\n<p>The following is a sample ${s.title} request and response. The placeholders shown need to be replaced with actual values.</p>\n` +
          `<pre id="${s.id}-request" tabindex="0" aria-label="${s.title} request">${esc(s.request)}</pre>\n` +
          `<pre id="${s.id}-response" tabindex="0" aria-label="${s.title} response">${esc(s.response)}</pre>\n`,
      )
      .join('');
    expect(rest).toBe(sections + '</main></body></html>\n');
    expect(rest.match(/<h3 id="(\w+)">([^<]+)<\/h3>/g)).toEqual([
      '<h3 id="soap11">SOAP 1.1</h3>',
      '<h3 id="soap12">SOAP 1.2</h3>',
      '<h3 id="get">HTTP GET</h3>',
      '<h3 id="post">HTTP POST</h3>',
    ]);
  });

  test('a vehicle operation: its WSDL documentation and its state parameter named; without documentation, its country', () => {
    const usa = findOperation('CheckUSA')!;
    expect(operationPage(model, usa, [], LINKS)).toContain(
      '<p>USA: looks up a vehicle by its registration and <code>State</code> and returns it as a <code>Vehicle</code>: <code>vehicleJson</code>, the record as JSON text, and <code>vehicleData</code>, its fields.</p>',
    );
    const check = findOperation('Check')!;
    const undocumented: ContractModel = { ...model, documentation: new Map() };
    expect(operationPage(undocumented, check, [], LINKS)).toContain(
      '<p>United Kingdom: looks up a vehicle by its registration and returns it as a <code>Vehicle</code>: <code>vehicleJson</code>, the record as JSON text, and <code>vehicleData</code>, its fields.</p>',
    );
  });

  test('a parameter with no hint gets a field without a description; every value is escaped, quotes too', () => {
    const op = {
      ...findOperation('Check')!,
      name: 'Odd',
      params: ['Colour', 'username'],
      required: ['username'],
    } as unknown as Operation;
    const page = operationPage(model, op, [], LINKS);
    expect(page).toContain(
      '<div class="field"><label for="param-Colour">Colour (optional)</label><input id="param-Colour" name="Colour" type="text" autocomplete="off" spellcheck="false"></div>',
    );
    const hostile: ContractModel = { ...model, serviceName: `A&B <"x'>`, serviceDocumentation: '' };
    const svc = noStyle(servicePage(hostile, [], NS, LINKS));
    expect(svc).toContain('<title>A&amp;B &lt;&quot;x&#39;&gt; Web Service</title>');
    expect(svc).toContain('<header><h1>A&amp;B &lt;&quot;x&#39;&gt;</h1></header>');
  });

  test('the unknown-operation page offers a case-insensitive match, or nothing', () => {
    const withMatch = noStyle(unknownOperationPage(model, findOperation('UKMOT'), LINKS));
    expect(withMatch).toBe(
      HEAD('Reg Web Service: unknown operation') +
        `<header><h1>Reg</h1>${BACK}</header>\n<main><h2>Unknown operation</h2>\n<p>This service has no operation of that name.</p>\n` +
        '<p>Operation names are case-sensitive. Did you mean <a href="?op=UKMOT">UKMOT</a>?</p>\n</main></body></html>\n',
    );
    expect(noStyle(unknownOperationPage(model, undefined, LINKS))).toBe(
      HEAD('Reg Web Service: unknown operation') +
        `<header><h1>Reg</h1>${BACK}</header>\n<main><h2>Unknown operation</h2>\n<p>This service has no operation of that name.</p>\n</main></body></html>\n`,
    );
  });
});

describe('failures on our side (README, Errors: INTERNAL_ERROR, "the log has the detail")', () => {
  /**
   * The JSON API and the credits endpoint alone in an express app, with a service that fails and a logger that records.
   */
  async function failing(
    error: unknown,
  ): Promise<{ url: string; logged: Array<[string, Record<string, unknown>]>; close: () => Promise<void> }> {
    const logged: Array<[string, Record<string, unknown>]> = [];
    const logger = {
      error: (msg: string, meta: Record<string, unknown>) => logged.push([msg, meta]),
    } as unknown as Logger;
    const service = { lookup: async () => Promise.reject(error) } as unknown as LookupService;
    const credits = { creditsLeft: async () => Promise.reject(error) } as unknown as CreditsService;
    const app = express();
    app.use(
      jsonHandler({
        service,
        logger,
        corsOrigins: [],
        publicUrl: null,
        trustProxy: { list: [], has: () => false },
      }),
    );
    app.use(creditsRouter(credits, logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, logged, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  test('a lookup that throws is 500 INTERNAL_ERROR without the detail, which goes to the log with the operation', async () => {
    const f = await failing(new Error('disk on fire at /var/lib/secret.db'));
    try {
      const res = await fetch(`${f.url}/api/json.aspx/Check/RG11ABC?username=demo`);
      const body = await res.text();
      expect([res.status, res.headers.get('x-error-code')]).toEqual([500, 'INTERNAL_ERROR']);
      expect(body).not.toContain('disk on fire');
      expect(f.logged).toHaveLength(1);
      expect(f.logged[0][0]).toBe('lookup failed');
      expect(f.logged[0][1].operation).toBe('Check');
      expect(String(f.logged[0][1].error)).toContain('Error: disk on fire at /var/lib/secret.db');
    } finally {
      await f.close();
    }
  });

  test('a lookup refused with an error of the table is answered, not logged', async () => {
    const f = await failing(
      new LookupError('VEHICLE_NOT_FOUND', "No vehicle found for registration 'X' (United Kingdom)"),
    );
    try {
      const res = await fetch(`${f.url}/api/json.aspx/Check/X?username=demo`);
      expect(res.status).toBe(404);
      expect(f.logged).toEqual([]);
    } finally {
      await f.close();
    }
  });

  test('a thrown value that is not an Error is logged as text', async () => {
    const f = await failing('plain text failure');
    try {
      expect((await fetch(`${f.url}/api/json.aspx/Check/X?username=demo`)).status).toBe(500);
      expect(f.logged.map(([m, meta]) => [m, meta.error])).toEqual([['lookup failed', 'plain text failure']]);
      expect((await fetch(`${f.url}/ajax/getcredits.aspx?username=demo`)).status).toBe(500);
      expect(f.logged[1]).toEqual(['credits failed', { error: 'plain text failure' }]);
    } finally {
      await f.close();
    }
  });

  test('credits that fail are INTERNAL_ERROR as one plain line, logged; a refusal of the table is not logged', async () => {
    const f = await failing(new Error('pool exhausted'));
    try {
      const res = await fetch(`${f.url}/ajax/getcredits.aspx?username=demo`);
      expect([res.status, res.headers.get('x-error-code'), res.headers.get('content-type')]).toEqual([
        500,
        'INTERNAL_ERROR',
        'text/plain; charset=utf-8',
      ]);
      expect(await res.text()).not.toContain('pool exhausted');
      expect(f.logged.map(([m]) => m)).toEqual(['credits failed']);
      expect(String(f.logged[0][1].error)).toContain('Error: pool exhausted');
    } finally {
      await f.close();
    }
    const g = await failing(new LookupError('MISSING_PARAMETER', "Missing required parameter 'username'"));
    try {
      expect((await fetch(`${g.url}/ajax/getcredits.aspx`)).status).toBe(400);
      expect(g.logged).toEqual([]);
    } finally {
      await g.close();
    }
  });
});

describe('what each transport tells the access log (README, The access log: transport, operation, outcome, username)', () => {
  interface Harness {
    url: string;
    contexts: RequestContext[];
    logged: string[];
    close: () => Promise<void>;
  }
  async function harness(): Promise<Harness> {
    const contexts: RequestContext[] = [];
    const logged: string[] = [];
    const logger = { error: (msg: string) => logged.push(msg) } as unknown as Logger;
    const service = {
      lookup: async (
        op: { name: string },
        raw: Record<string, unknown>,
        _caller: unknown,
        notes?: { username?: string; sandbox?: boolean },
      ) => {
        if (notes) notes.username = String(raw.username);
        const reg = String(raw.RegistrationNumber);
        if (reg === 'SLOW') throw new LookupError('RATE_LIMITED', 'Too many lookups', 30);
        if (reg === 'ER19ERR') {
          if (notes) notes.sandbox = true;
          throw new LookupError('INTERNAL_ERROR', 'sandbox failure');
        }
        if (reg !== 'RG11ABC')
          throw new LookupError('VEHICLE_NOT_FOUND', `No vehicle found for registration '${reg}' (${op.name})`);
        return { kind: 'Vehicle', payload: '{"Description":"FORD FOCUS"}', source: 'import', asOf: null };
      },
    } as unknown as LookupService;
    const credits = {
      creditsLeft: async (raw: Record<string, unknown>) => ({ username: String(raw.username), credits: 5 }),
    } as unknown as CreditsService;
    const app = express();
    app.use((req, res, next) => {
      const ctx: RequestContext = { id: String(contexts.length), start: 0 };
      setContext(req, ctx);
      res.on('finish', () => contexts.push(ctx));
      next();
    });
    app.use(
      jsonHandler({
        service,
        logger,
        corsOrigins: [],
        publicUrl: null,
        trustProxy: { list: [], has: () => false },
      }),
    );
    app.use(creditsRouter(credits, logger));
    app.use(imageHandler());
    app.use(helpRouter({ wsdl: WSDL, namespace: NS, publicUrl: null }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, contexts, logged, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  async function fields(
    h: Harness,
    path: string,
    init: RequestInit = {},
  ): Promise<Omit<RequestContext, 'id' | 'start'> & { status: number; retryAfter: string | null }> {
    const before = h.contexts.length;
    const res = await fetch(h.url + path, init);
    await res.text();
    for (let i = 0; i < 100 && h.contexts.length === before; i++) await new Promise((r) => setTimeout(r, 5));
    const { id: _id, start: _start, ...rest } = h.contexts[h.contexts.length - 1];
    return { status: res.status, retryAfter: res.headers.get('retry-after'), ...rest };
  }

  test('the JSON API: json, the operation, the username, the error code', async () => {
    const h = await harness();
    try {
      expect(await fields(h, '/api/json.aspx/Check/RG11ABC?username=demo')).toEqual({
        status: 200,
        retryAfter: null,
        transport: 'json',
        operation: 'Check',
        username: 'demo',
      });
      expect(await fields(h, '/api/json.aspx/Check/ZZ99ZZZ?username=demo')).toEqual({
        status: 404,
        retryAfter: null,
        transport: 'json',
        operation: 'Check',
        username: 'demo',
        errorCode: 'VEHICLE_NOT_FOUND',
      });
      expect(await fields(h, '/api/json.aspx/Check/RG11ABC')).toEqual({
        status: 401,
        retryAfter: null,
        transport: 'json',
        operation: 'Check',
        errorCode: 'MISSING_PARAMETER',
      });
      expect(await fields(h, '/api/json.aspx/Nope/RG11ABC')).toEqual({
        status: 404,
        retryAfter: null,
        transport: 'json',
        errorCode: 'UNKNOWN_OPERATION',
      });
      // README, Errors: Retry-After where it applies.
      expect(await fields(h, '/api/json.aspx/Check/SLOW?username=demo')).toEqual({
        status: 429,
        retryAfter: '30',
        transport: 'json',
        operation: 'Check',
        username: 'demo',
        errorCode: 'RATE_LIMITED',
      });
      // A sandbox plate's INTERNAL_ERROR is the sandbox doing as asked: answered, marked, not logged as a failure.
      expect(await fields(h, '/api/json.aspx/Check/ER19ERR?username=demo')).toEqual({
        status: 500,
        retryAfter: null,
        transport: 'json',
        operation: 'Check',
        username: 'demo',
        sandbox: true,
        errorCode: 'INTERNAL_ERROR',
      });
      expect(h.logged).toEqual([]);
    } finally {
      await h.close();
    }
  });

  test('credits, images, the service address', async () => {
    const h = await harness();
    try {
      expect(await fields(h, '/ajax/getcredits.aspx?username=garage')).toEqual({
        status: 200,
        retryAfter: null,
        transport: 'credits',
        username: 'garage',
      });
      expect(await fields(h, '/ajax/getcredits.aspx?username=garage', { method: 'POST' })).toEqual({
        status: 405,
        retryAfter: null,
        transport: 'credits',
        errorCode: 'METHOD_NOT_ALLOWED',
      });
      const name = Buffer.from('FORD FOCUS').toString('base64');
      expect(await fields(h, `/image.aspx/@${name}`)).toEqual({ status: 200, retryAfter: null, transport: 'other' });
      expect(await fields(h, '/image.aspx/@!!!!')).toEqual({
        status: 400,
        retryAfter: null,
        transport: 'other',
        errorCode: 'INVALID_PARAMETER',
      });
      expect(await fields(h, `/image.aspx/@${name}`, { method: 'POST' })).toEqual({
        status: 405,
        retryAfter: null,
        transport: 'other',
        errorCode: 'METHOD_NOT_ALLOWED',
      });
      expect(await fields(h, '/api/reg.asmx')).toEqual({ status: 200, retryAfter: null, transport: 'help' });
      expect(await fields(h, '/api/reg.asmx?op=UKMOT')).toEqual({ status: 200, retryAfter: null, transport: 'help' });
      expect(await fields(h, '/api/reg.asmx?disco')).toEqual({ status: 200, retryAfter: null, transport: 'help' });
      expect(await fields(h, '/api/reg.asmx?WSDL')).toEqual({ status: 200, retryAfter: null, transport: 'wsdl' });
      expect(await fields(h, '/api/reg.asmx', { method: 'PUT' })).toEqual({
        status: 405,
        retryAfter: null,
        transport: 'other',
        errorCode: 'METHOD_NOT_ALLOWED',
      });
      expect(await fields(h, '/api/reg.asmx?op=A&op=B')).toEqual({
        status: 400,
        retryAfter: null,
        transport: 'help',
        errorCode: 'INVALID_PARAMETER',
      });
    } finally {
      await h.close();
    }
  });
});

test("a help page that cannot be written (an unreadable WSDL) goes to the app's error handler: answered, never left hanging", async () => {
  const app = express();
  app.use(helpRouter({ wsdl: '<wsdl:definitions', namespace: NS, publicUrl: null }));
  const seen: unknown[] = [];
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    seen.push(err);
    res.status(500).end('INTERNAL_ERROR');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/reg.asmx?op=Check`, {
      signal: AbortSignal.timeout(5000),
    });
    expect([res.status, await res.text()]).toEqual([500, 'INTERNAL_ERROR']);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toBeInstanceOf(LookupError);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

describe('resultInner: a vehicle record as SOAP and the HTTP forms write it (README, What comes back)', () => {
  // Hand-written: a record with some fields, markup and quotes in its text.
  const payload = JSON.stringify({
    ABICode: '12345678',
    Description: 'FORD FOCUS <ZETEC> & "CO"',
    RegistrationYear: '2011',
    CarMake: { CurrentTextValue: 'FORD' },
    CarModel: { CurrentTextValue: 'FOCUS' },
    EngineSize: { CurrentValue: 1598, CurrentTextValue: '1598cc' },
    IndicativeValue: 'x',
  });
  // vehicleJson: the stored text, & < > escaped, quotes kept. vehicleData: the WSDL's order; every
  // composite written, one the record lacks with both values nil (SOAP) or type="null" (HTTP).
  const json = payload.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const desc = 'FORD FOCUS &lt;ZETEC&gt; &amp; "CO"';
  const missing = [
    'BodyStyle',
    'NumberOfDoors',
    'Transmission',
    'FuelType',
    'Immobiliser',
    'NumberOfSeats',
    'DriverSide',
  ];

  test('SOAP: compact, absent values xsi:nil', () => {
    const nil = (n: string) => `<${n}><CurrentValue xsi:nil="true" /><CurrentTextValue xsi:nil="true" /></${n}>`;
    expect(resultInner({ kind: 'Vehicle', payload }, 'soap')).toBe(
      `<vehicleJson>${json}</vehicleJson><vehicleData>` +
        `<ABICode>12345678</ABICode><Description>${desc}</Description><RegistrationYear>2011</RegistrationYear>` +
        '<CarMake><CurrentValue xsi:nil="true" /><CurrentTextValue>FORD</CurrentTextValue></CarMake><CarModel>FOCUS</CarModel>' +
        nil('BodyStyle') +
        '<EngineSize><CurrentValue>1598</CurrentValue><CurrentTextValue>1598cc</CurrentTextValue></EngineSize>' +
        nil('NumberOfDoors') +
        nil('Transmission') +
        nil('FuelType') +
        nil('Immobiliser') +
        nil('NumberOfSeats') +
        '<IndicativeValue>x</IndicativeValue>' +
        nil('DriverSide') +
        '</vehicleData>',
    );
    expect(missing).toHaveLength(7);
  });

  test('HTTP: a CRLF and two spaces a level before each element, absent values type="null"', () => {
    const nil = (n: string) => [
      `    <${n}>`,
      '      <CurrentValue type="null" />',
      '      <CurrentTextValue type="null" />',
      `    </${n}>`,
    ];
    const lines = [
      '',
      `  <vehicleJson>${json}</vehicleJson>`,
      '  <vehicleData>',
      '    <ABICode>12345678</ABICode>',
      `    <Description>${desc}</Description>`,
      '    <RegistrationYear>2011</RegistrationYear>',
      '    <CarMake>',
      '      <CurrentValue type="null" />',
      '      <CurrentTextValue>FORD</CurrentTextValue>',
      '    </CarMake>',
      '    <CarModel>FOCUS</CarModel>',
      ...nil('BodyStyle'),
      '    <EngineSize>',
      '      <CurrentValue>1598</CurrentValue>',
      '      <CurrentTextValue>1598cc</CurrentTextValue>',
      '    </EngineSize>',
      ...nil('NumberOfDoors'),
      ...nil('Transmission'),
      ...nil('FuelType'),
      ...nil('Immobiliser'),
      ...nil('NumberOfSeats'),
      '    <IndicativeValue>x</IndicativeValue>',
      ...nil('DriverSide'),
      '  </vehicleData>',
    ];
    expect(resultInner({ kind: 'Vehicle', payload }, 'http')).toBe(lines.join('\r\n'));
  });

  test('UKMOT in both forms: the lists, a null string nil or type="null"', () => {
    const mot = JSON.stringify({
      taxDate: '2027-03-01',
      tests: [{ TestDate: '2024-03-01', Result: 'Pass', FailureReasons: [], Advisories: ['Tyre worn', null] }],
      extendedInformation: [['Colour', 'Blue']],
    });
    expect(resultInner({ kind: 'UKMOTData', payload: mot }, 'soap')).toBe(
      '<Tests><UKTest><TestDate>2024-03-01</TestDate><Result>Pass</Result><FailureReasons /><Advisories><string>Tyre worn</string><string xsi:nil="true" /></Advisories></UKTest></Tests>' +
        '<taxDate>2027-03-01</taxDate>' +
        '<Json>[{"TestDate":"2024-03-01","Result":"Pass","FailureReasons":[],"Advisories":["Tyre worn",null]}]</Json>' +
        '<ExtendedInformation><ArrayOfString><string>Colour</string><string>Blue</string></ArrayOfString></ExtendedInformation>' +
        '<ExtendedInformationJson>[["Colour","Blue"]]</ExtendedInformationJson>',
    );
    expect(resultInner({ kind: 'UKMOTData', payload: mot }, 'http')).toBe(
      [
        '',
        '  <Tests>',
        '    <UKTest>',
        '      <TestDate>2024-03-01</TestDate>',
        '      <Result>Pass</Result>',
        '      <FailureReasons />',
        '      <Advisories>',
        '        <string>Tyre worn</string>',
        '        <string type="null" />',
        '      </Advisories>',
        '    </UKTest>',
        '  </Tests>',
        '  <taxDate>2027-03-01</taxDate>',
        '  <Json>[{"TestDate":"2024-03-01","Result":"Pass","FailureReasons":[],"Advisories":["Tyre worn",null]}]</Json>',
        '  <ExtendedInformation>',
        '    <ArrayOfString>',
        '      <string>Colour</string>',
        '      <string>Blue</string>',
        '    </ArrayOfString>',
        '  </ExtendedInformation>',
        '  <ExtendedInformationJson>[["Colour","Blue"]]</ExtendedInformationJson>',
      ].join('\r\n'),
    );
  });
});

describe('the image handler (README, Vehicle images)', () => {
  async function withImages<T>(f: (url: string) => Promise<T>): Promise<T> {
    const app = express();
    app.use(imageHandler());
    app.use((_req, res) => res.status(404).end('next'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      return await f(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }
  const name = Buffer.from('FORD FOCUS', 'utf8').toString('base64');

  test('GET: the SVG with image/svg+xml, nosniff, default-src none, a day of caching; a query string is not part of the name', async () => {
    await withImages(async (url) => {
      for (const path of [`/image.aspx/@${name}`, `/image.aspx/@${name}?v=2`, `/Image.ASPX/@${name}`]) {
        const res = await fetch(url + path);
        const body = await res.text();
        expect(res.status).toBe(200);
        expect([
          res.headers.get('content-type'),
          res.headers.get('x-content-type-options'),
          res.headers.get('content-security-policy'),
          res.headers.get('cache-control'),
        ]).toEqual(['image/svg+xml; charset=utf-8', 'nosniff', "default-src 'none'", 'public, max-age=86400']);
        expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
        expect(body).toBe(imageSvg('FORD FOCUS'));
      }
    });
  });

  test('HEAD: the headers alone; another method 405 with Allow; no @ or a bad name is one plain line; other paths pass by', async () => {
    await withImages(async (url) => {
      const head = await fetch(`${url}/image.aspx/@${name}`, { method: 'HEAD' });
      expect([
        head.status,
        head.headers.get('content-type'),
        head.headers.get('content-length'),
        await head.text(),
      ]).toEqual([200, 'image/svg+xml; charset=utf-8', String(Buffer.byteLength(imageSvg('FORD FOCUS'))), '']);
      const post = await fetch(`${url}/image.aspx/@${name}`, { method: 'POST' });
      expect([post.status, post.headers.get('allow'), await post.text()]).toEqual([
        405,
        'GET, HEAD',
        'METHOD_NOT_ALLOWED: POST is not allowed here; use GET\n',
      ]);
      const noAt = await fetch(`${url}/image.aspx/${name}`);
      expect([noAt.status, await noAt.text()]).toEqual([
        400,
        'INVALID_PARAMETER: The image name must be @ and the base64 of "Make Model"\n',
      ]);
      const bad = await fetch(`${url}/image.aspx/@Rk9SRCBGT0NVUx==`);
      expect([bad.status, await bad.text()]).toEqual([
        400,
        'INVALID_PARAMETER: The image name is not canonical base64\n',
      ]);
      for (const other of ['/image.aspxx/@' + name, '/image.aspx', '/images/@' + name]) {
        const res = await fetch(url + other);
        expect([res.status, await res.text()]).toEqual([404, 'next']);
      }
    });
  });
});
