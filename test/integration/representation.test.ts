// What callers read byte by byte: escaping, empty composites, the ASMX layout of the HTTP forms.

import { call, TRANSPORTS } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.close());

const COMPOSITES = [
  'CarMake',
  'BodyStyle',
  'EngineSize',
  'NumberOfDoors',
  'Transmission',
  'FuelType',
  'Immobiliser',
  'NumberOfSeats',
  'DriverSide',
];

describe('vehicleJson survives a regular expression and JSON.parse without entity decoding', () => {
  test.each(TRANSPORTS)('%s', async (t) => {
    const res = await call(srv.url, t, 'Check', { RegistrationNumber: 'QU07 TED', username: 'demo' });
    expect(res.status).toBe(200);
    const raw = /<vehicleJson>([\s\S]*?)<\/vehicleJson>/.exec(res.body)![1];
    expect(raw).toContain('\\"ST\\" Edition &amp; &lt;Sport&gt;');
    expect(raw).not.toContain('&quot;');
    // The way callers in the wild do it: cut, then JSON.parse with only the three escapes undone.
    const vehicle = JSON.parse(raw.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
    expect(vehicle.Description).toBe('FORD FOCUS "ST" Edition & <Sport> pack (sample)');
    expect(res.body).toContain('<Description>FORD FOCUS "ST" Edition &amp; &lt;Sport&gt; pack (sample)</Description>');
  });
});

describe('a vehicle that lacks every composite still writes each one', () => {
  test.each(['soap11', 'soap12'] as const)('%s: CurrentValue and CurrentTextValue are xsi:nil', async (t) => {
    const res = await call(srv.url, t, 'Check', { RegistrationNumber: 'NO11CMP', username: 'demo' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"');
    for (const c of COMPOSITES) {
      expect(res.body).toContain(`<${c}><CurrentValue xsi:nil="true" /><CurrentTextValue xsi:nil="true" /></${c}>`);
    }
  });

  test.each(['get', 'post'] as const)('%s: empty elements with a type attribute', async (t) => {
    const res = await call(srv.url, t, 'Check', { RegistrationNumber: 'NO11CMP', username: 'demo' });
    for (const c of COMPOSITES) {
      expect(res.body).toContain(
        `    <${c}>\r\n      <CurrentValue type="null" />\r\n      <CurrentTextValue type="null" />\r\n    </${c}>`,
      );
    }
    expect(res.body).not.toContain('xsi:nil');
  });
});

test('the HTTP forms are laid out as ASMX writes them: declaration, line break, two-space indentation, one element per line', async () => {
  const res = await call(srv.url, 'get', 'Check', { RegistrationNumber: 'RG11ABC', username: 'demo' });
  const lines = res.body.split('\r\n');
  expect(lines[0]).toBe('<?xml version="1.0" encoding="utf-8"?>');
  expect(lines[1]).toBe(
    '<Vehicle xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns="http://regcheck.org.uk">',
  );
  expect(lines[2]).toMatch(/^ {2}<vehicleJson>\{.*\}<\/vehicleJson>$/);
  expect(lines[3]).toBe('  <vehicleData>');
  expect(lines[4]).toBe('    <ABICode>32130779</ABICode>');
  expect(lines[lines.length - 1]).toBe('</Vehicle>');
  for (const l of lines.slice(1)) expect(l).toMatch(/^( {2})*<[^<]+(<\/[^>]+>)?$|^( {2})*<[^>]+>[^<]*<\/[^>]+>$/);
});

test('UKMOT over HTTP GET: the UKMOTData root, tests in order, failure reasons and extended information as string arrays', async () => {
  const res = await call(srv.url, 'get', 'UKMOT', { RegistrationNumber: 'RG11ABC', username: 'demo' });
  expect(res.status).toBe(200);
  expect(res.body).toContain('<UKMOTData xmlns:xsi=');
  expect(res.body).toContain(
    '<FailureReasons>\r\n        <string>Offside headlamp aim too high</string>\r\n        <string>Brake pipe corroded</string>\r\n      </FailureReasons>',
  );
  expect(res.body).toContain('<FailureReasons />');
  expect(res.body).toContain(
    '<ArrayOfString>\r\n      <string>Colour</string>\r\n      <string>Blue</string>\r\n    </ArrayOfString>',
  );
  expect(res.body).toContain('<taxDate>2026-09-01</taxDate>');
});

test('SOAP results are unprefixed, in the default namespace, inside the Response/Result pair', async () => {
  const res = await call(srv.url, 'soap11', 'CheckSouthAfrica', { RegistrationNumber: 'CA123456', username: 'demo' });
  expect(res.body).toMatch(
    /<soap:Body><CheckSouthAfricaResponse xmlns="http:\/\/regcheck\.org\.uk"[^>]*><CheckSouthAfricaResult><vehicleJson>/,
  );
  expect(res.body).toMatch(
    /<\/vehicleData><\/CheckSouthAfricaResult><\/CheckSouthAfricaResponse><\/soap:Body><\/soap:Envelope>$/,
  );
});
