// The whole chain with every provider registered: dvla, dvsa and rdw each through the service
// against its local server, and the failover order of the issue: on not-found the next provider is
// asked, and on a failure too, before the caller is refused.

import { startServer, type TestServer } from '../helpers/server';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';
import { DVSA_CLIENT, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';
import { startFakeRdw, type FakeRdw } from '../helpers/upstream-rdw';
import { httpGet } from '../helpers/call';

let dvla: FakeDvla;
let dvsa: FakeDvsa;
let rdw: FakeRdw;
let regcheckUpstream: TestServer;
let svc: TestServer;

beforeAll(async () => {
  [dvla, dvsa, rdw] = await Promise.all([startFakeDvla(), startFakeDvsa(), startFakeRdw()]);
  regcheckUpstream = await startServer();
  svc = await startServer(
    {
      PROVIDERS: 'store,dvla,dvsa,rdw,regcheck',
      DVLA_URL: dvla.url,
      DVLA_API_KEY: DVLA_TEST_KEY,
      DVSA_URL: dvsa.apiUrl,
      DVSA_TOKEN_URL: dvsa.tokenUrl,
      DVSA_CLIENT_ID: DVSA_CLIENT.clientId,
      DVSA_CLIENT_SECRET: DVSA_CLIENT.clientSecret,
      DVSA_API_KEY: DVSA_CLIENT.apiKey,
      RDW_URL: rdw.url,
      REGCHECK_URL: regcheckUpstream.url,
      REGCHECK_USERNAME: 'relay',
      REGCHECK_CREDITS_INTERVAL_MS: '0',
      UPSTREAM_TIMEOUT_MS: '3000',
    },
    { sample: false },
  );
});
afterAll(async () => {
  await svc.close();
  await regcheckUpstream.close();
  await Promise.all([dvla.close(), dvsa.close(), rdw.close()]);
});

const get = (op: string, reg: string) => httpGet(svc.url, op, { RegistrationNumber: reg, username: 'tester' });

test('UKMOT from the DVSA, then from the cache', async () => {
  const res = await get('UKMOT', 'AB12 CDE');
  expect(res.status).toBe(200);
  const xml = await res.text();
  expect(xml).toContain('<TestNumber>111122223333</TestNumber>');
  expect(xml).toContain('Nearside Front Tyre worn close to legal limit');
  const calls = dvsa.motRequests;
  expect((await get('UKMOT', 'AB12CDE')).status).toBe(200);
  expect(dvsa.motRequests).toBe(calls);
});

test('CheckNetherlands from RDW', async () => {
  const res = await get('CheckNetherlands', 'XX-999-X');
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('VOLKSWAGEN');
  expect(rdw.requests.some((r) => r.kenteken === 'XX999X')).toBe(true);
});

test('Check from the DVLA', async () => {
  const res = await get('Check', 'AA19AAA');
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('FORD 2000cc');
});

test('not found at the DVLA: the next provider that answers Check (regcheck) is asked', async () => {
  const res = await get('Check', 'RG11 ABC');
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('FORD FOCUS 1596cc (sample)');
  expect(dvla.calls.get('RG11ABC')).toBe(1);
});

test('the DVLA failing: the next provider answers instead of a refusal', async () => {
  dvla.answers.set('RG12DEF', { status: 500, body: '{}' });
  const res = await get('Check', 'RG12DEF');
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('VOLKSWAGEN GOLF');
});

test('not found anywhere: VEHICLE_NOT_FOUND', async () => {
  const res = await get('CheckNetherlands', 'ZZ-000-Z');
  expect(res.status).toBe(404);
  expect(await res.text()).toMatch(/^VEHICLE_NOT_FOUND: /);
});
