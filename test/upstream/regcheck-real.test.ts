// A gateway in front of a RegCheck service answering with the public service's real answers
// (test/helpers/upstream-regcheck.ts, test/fixtures/regcheck-answers.ts): issue 42, point 1. UK
// and Irish plates are served over every transport instead of SERVICE_UNAVAILABLE; what the
// contract cannot carry (an empty ABICode) is left out of vehicleData, the service's own keys stay
// in vehicleJson, and the service's "Lookup failed" is a not-found, not a failure for the breaker.

import { call, TRANSPORTS } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';
import { REGCHECK_TEST_USERNAME, startFakeRegcheck, type FakeRegcheck } from '../helpers/upstream-regcheck';

let regcheck: FakeRegcheck;
let gateway: TestServer;

beforeAll(async () => {
  regcheck = await startFakeRegcheck();
  gateway = await startServer(
    {
      PROVIDERS: 'store,regcheck',
      REGCHECK_URL: regcheck.url,
      REGCHECK_USERNAME: REGCHECK_TEST_USERNAME,
      REGCHECK_CREDITS_INTERVAL_MS: '0',
      UPSTREAM_TIMEOUT_MS: '3000',
      // One failure would open it: a real answer counted as a failure shows at once.
      UPSTREAM_BREAKER_FAILURES: '1',
    },
    { sample: false },
  );
});
afterAll(async () => {
  await gateway.close();
  await regcheck.close();
});

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const vehicleJson = (xml: string) =>
  JSON.parse(unescape(/<vehicleJson>([\s\S]*?)<\/vehicleJson>/.exec(xml)![1])) as Record<string, unknown>;

describe.each(TRANSPORTS)('%s', (transport) => {
  test('Check for the BMW 520: answered, no ABICode element, MakeDescription BMW, ImageUrl in vehicleJson', async () => {
    const a = await call(gateway.url, transport, 'Check', { RegistrationNumber: 'AB11BMW', username: 'anyone' });
    expect(a.status).toBe(200);
    expect(a.body).toContain('<Description>BMW 520</Description>');
    expect(a.body).toContain('<RegistrationYear>2011</RegistrationYear>');
    expect(a.body).toContain('<MakeDescription>BMW</MakeDescription>');
    expect(a.body).not.toContain('<ABICode');
    expect(vehicleJson(a.body)).toMatchObject({ ImageUrl: 'https://www.regcheck.org.uk/image.aspx/@Qk1XIDUyMA==' });
  });

  test('CheckIreland for 04MH8917: the Audi A6', async () => {
    const a = await call(gateway.url, transport, 'CheckIreland', { RegistrationNumber: '04 MH 8917', username: 'x' });
    expect(a.status).toBe(200);
    expect(a.body).toContain('<Description>AUDI A6 1.9 TDI SE 130BHP 4DR A</Description>');
    expect(vehicleJson(a.body)).toMatchObject({ VIN: 'WAUZZZ4BX4N093080', County: 'Meath' });
  });
});

test('Check for the Peugeot 208: its ABI code "39125401" answered as the integer, its seat count 5 as the text', async () => {
  const a = await call(gateway.url, 'get', 'Check', { RegistrationNumber: 'BL64 JTZ', username: 'x' });
  expect(a.status).toBe(200);
  expect(a.body).toContain('<ABICode>39125401</ABICode>');
  expect(a.body).toMatch(/<NumberOfSeats>\s*<CurrentValue type="null" \/>\s*<CurrentTextValue>5<\/CurrentTextValue>/);
});

test('UKMOT for the Renault Clio: its four tests', async () => {
  const a = await call(gateway.url, 'get', 'UKMOT', { RegistrationNumber: 'CL14RNO', username: 'x' });
  expect(a.status).toBe(200);
  expect(a.body.match(/<UKTest>/g)).toHaveLength(4);
  expect(a.body).toContain('<taxDate>01 Sep 2021</taxDate>');
});

test('a plate the service has none for ("UK Lookup failed"): VEHICLE_NOT_FOUND, and the breaker stays closed', async () => {
  const a = await call(gateway.url, 'get', 'Check', { RegistrationNumber: 'ZZ99ZZZ', username: 'x' });
  expect(a.status).toBe(404);
  expect(a.body).toMatch(/^VEHICLE_NOT_FOUND: /);
  const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: Record<string, string> };
  expect(ready.checks['upstream:regcheck']).toBe('ok');
});
