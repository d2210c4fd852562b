// The regcheck provider's reading of a RegCheck answer, held to docs/upstream.md (RegCheck-compatible
// services): the record from vehicleJson (UKMOT: Json, ExtendedInformationJson, taxDate); a DTD, an
// entity declaration, CDATA or a processing instruction refused; references resolved, nothing else
// expanded; error lines mapped back to our codes. Answers are hand-written, as a RegCheck sends them.

import { RegcheckProvider } from '../../src/providers/regcheck';
import { UpstreamFailure, type UpstreamResponse } from '../../src/providers/provider';

const provider = new RegcheckProvider({ url: 'https://regcheck.example', username: 'me' });
const reply = (status: number, body: string, headers: Record<string, string> = {}) => ({
  http: async (): Promise<UpstreamResponse> => ({ status, headers, body }),
  signal: new AbortController().signal,
});
const fetchWith = (op: string, status: number, body: string, headers: Record<string, string> = {}) =>
  provider.fetch(op, 'AB12CDE', '', reply(status, body, headers));

async function failure(p: Promise<unknown>): Promise<UpstreamFailure> {
  try {
    await p;
  } catch (e) {
    if (e instanceof UpstreamFailure) return e;
    throw e;
  }
  throw new Error('expected an UpstreamFailure');
}

const VEHICLE = `<?xml version="1.0" encoding="utf-8"?>
<Vehicle xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://regcheck.org.uk">
  <vehicleJson>{"Description":"A &amp; B &lt;1&gt; &#233;&#x20AC;","CarMake":{"CurrentTextValue":"FORD"}}</vehicleJson>
  <vehicleData><Description>A</Description></vehicleData>
</Vehicle>`;

test('a Vehicle answer: the record is vehicleJson, its references resolved', async () => {
  expect(await fetchWith('Check', 200, VEHICLE)).toEqual({
    found: true,
    record: { Description: 'A & B <1> é€', CarMake: { CurrentTextValue: 'FORD' } },
  });
});

test('a UKMOTData answer: tests from Json, extendedInformation and taxDate', async () => {
  const xml = `<?xml version="1.0"?><UKMOTData xmlns="http://regcheck.org.uk"><Tests><UKTest><TestDate>2025-01-01</TestDate></UKTest></Tests><taxDate>2026-05-01</taxDate><Json>[{"TestDate":"2025-01-01"}]</Json><ExtendedInformation /><ExtendedInformationJson>[["a","b"]]</ExtendedInformationJson></UKMOTData>`;
  expect(await fetchWith('UKMOT', 200, xml)).toEqual({
    found: true,
    record: { tests: [{ TestDate: '2025-01-01' }], extendedInformation: [['a', 'b']], taxDate: '2026-05-01' },
  });
});

test.each([
  [
    'a DTD',
    `<?xml version="1.0"?><!DOCTYPE Vehicle [<!ENTITY x "y">]><Vehicle><vehicleJson>{}</vehicleJson></Vehicle>`,
  ],
  ['CDATA', `<Vehicle><vehicleJson><![CDATA[{}]]></vehicleJson></Vehicle>`],
  ['a processing instruction', `<Vehicle><?evil x?><vehicleJson>{}</vehicleJson></Vehicle>`],
  ['an undefined entity', `<Vehicle><vehicleJson>{"a":"&nbsp;"}</vehicleJson></Vehicle>`],
  ['no vehicleJson', `<Vehicle><vehicleData /></Vehicle>`],
  ['vehicleJson that is not JSON', `<Vehicle><vehicleJson>{nope</vehicleJson></Vehicle>`],
  ['vehicleJson holding elements', `<Vehicle><vehicleJson><x>1</x></vehicleJson></Vehicle>`],
])('%s: a failure not retried', async (_what, xml) => {
  expect((await failure(fetchWith('Check', 200, xml))).kind).toBe('permanent');
});

test.each<[number, string, Record<string, string>, string]>([
  [404, 'VEHICLE_NOT_FOUND: No vehicle found for registration', {}, 'not found'],
  [400, 'INVALID_PARAMETER: RegistrationNumber is too long', {}, 'invalid'],
  [403, 'UNKNOWN_USERNAME: not registered', {}, 'permanent'],
  [429, 'OUT_OF_CREDIT: no credits left', {}, 'permanent'],
  [429, 'RATE_LIMITED: slow down', { 'retry-after': '3' }, 'transient'],
  [503, 'SERVICE_UNAVAILABLE: down', { 'retry-after': '5' }, 'transient'],
  [500, 'Server Error', {}, 'transient'],
])('status %i "%s" is %s', async (status, line, headers, want) => {
  const p = fetchWith('Check', status, line + '\n', headers);
  if (want === 'not found') return expect(await p).toEqual({ found: false });
  const f = await failure(p);
  expect(f.kind).toBe(want);
  if (headers['retry-after']) expect(f.retryAfterS).toBe(Number(headers['retry-after']));
});

test('credits: a number, or a failure', async () => {
  expect(await provider.remaining(reply(200, '42\n'))).toBe(42);
  expect((await failure(provider.remaining(reply(200, 'lots')))).kind).toBe('permanent');
});
