// UK Check and CheckMotorBikeUK from the DVLA and the DVSA together (issue 42, point 2), through
// the whole service against the local DVLA (its documented test vehicles) and DVSA servers, the
// DVSA holding test/fixtures/dvsa-answers.ts. Expectations from the issue and docs/upstream.md:
// the DVSA's model fills the answer (Description "FORD FOCUS", CarModel), the DVLA's fields stay
// the DVLA's, vehicleJson says which source gave which field, one charge and one cache entry,
// both calls within UPSTREAM_TIMEOUT_MS at once, and either source alone still answers.

import { createHash } from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';
import { DVSA_CLIENT, DVSA_VEHICLES, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';
import { AA19AAA_FORD_FOCUS, AE13SJX_PORSCHE_911 } from '../fixtures/dvsa-answers';
import { httpGet } from '../helpers/call';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let dvla: FakeDvla;
let dvsa: FakeDvsa;
const gateways: TestServer[] = [];

const env = (extra: Record<string, string> = {}) => ({
  PROVIDERS: 'store,dvla,dvsa',
  DVLA_URL: dvla.url,
  DVLA_API_KEY: DVLA_TEST_KEY,
  DVSA_URL: dvsa.apiUrl,
  DVSA_TOKEN_URL: dvsa.tokenUrl,
  DVSA_CLIENT_ID: DVSA_CLIENT.clientId,
  DVSA_CLIENT_SECRET: DVSA_CLIENT.clientSecret,
  DVSA_API_KEY: DVSA_CLIENT.apiKey,
  UPSTREAM_TIMEOUT_MS: '3000',
  UPSTREAM_BREAKER_FAILURES: '1000',
  USERNAME_POLICY: 'registered',
  ...extra,
});

async function gateway(extra: Record<string, string> = {}): Promise<TestServer> {
  const g = await startServer(env(extra), { sample: false });
  await g.store.accounts.putAccount({ username: key('caller'), credits: 10 });
  gateways.push(g);
  return g;
}

beforeAll(async () => {
  [dvla, dvsa] = await Promise.all([startFakeDvla(), startFakeDvsa()]);
  Object.assign(DVSA_VEHICLES, { AA19AAA: AA19AAA_FORD_FOCUS, AE13SJX: AE13SJX_PORSCHE_911 });
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  dvla.delayMs = 0;
  dvla.answers.clear();
  dvsa.tokenDelayMs = 0;
  dvsa.tokenDown = false;
});
afterAll(async () => {
  await Promise.all([dvla.close(), dvsa.close()]);
});

const get = (g: TestServer, reg: string, op = 'Check') =>
  httpGet(g.url, op, { RegistrationNumber: reg, username: 'caller' });

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const vehicleJson = (xml: string) =>
  JSON.parse(unescape(/<vehicleJson>([\s\S]*?)<\/vehicleJson>/.exec(xml)![1])) as Record<string, unknown>;
const element = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];

test.each(['Check', 'CheckMotorBikeUK'])(
  '%s AA19AAA: the DVSA model in Description and CarModel, the DVLA fields kept, each field named with its source',
  async (op) => {
    const g = await gateway();
    const res = await get(g, 'AA19 AAA', op);
    expect(res.status).toBe(200);
    const xml = await res.text();
    expect(element(xml, 'Description')).toBe('FORD FOCUS');
    expect(element(xml, 'CarModel')).toBe('FOCUS');
    expect(element(xml, 'ModelDescription')).toBe('FOCUS');
    expect(element(xml, 'RegistrationYear')).toBe('2019');
    // The DVLA's own values, not the DVSA's "1999" and "Red".
    expect(xml).toMatch(/<EngineSize>\s*<CurrentValue>2000<\/CurrentValue>/);
    const v = vehicleJson(xml);
    expect(v).toMatchObject({
      Colour: 'RED',
      TaxStatus: 'Taxed',
      FirstRegistrationDate: '2019-03-01',
      FirstUsedDate: '2019-03-01',
      OutstandingRecall: 'No',
      Sources: {
        Description: 'dvla+dvsa',
        CarMake: 'dvla',
        CarModel: 'dvsa',
        EngineSize: 'dvla',
        Colour: 'dvla',
        TaxStatus: 'dvla',
        FirstRegistrationDate: 'dvsa',
      },
    });
    expect(v).not.toHaveProperty('SourcesUnanswered');
    expect((v.dvla as { registrationNumber: string }).registrationNumber).toBe('AA19AAA');
  },
);

test('one lookup: one call to each, one charge; the next one from the one cache entry, charged again, no call', async () => {
  const g = await gateway();
  const calls = { dvla: dvla.calls.get('AA19AAA') ?? 0, dvsa: dvsa.motRequests };
  expect((await get(g, 'AA19AAA')).status).toBe(200);
  expect([(dvla.calls.get('AA19AAA') ?? 0) - calls.dvla, dvsa.motRequests - calls.dvsa]).toEqual([1, 1]);
  expect((await g.store.accounts.getAccount(key('caller')))?.credits).toBe(9);
  const again = await get(g, 'AA19AAA');
  expect(element(await again.text(), 'Description')).toBe('FORD FOCUS');
  expect([(dvla.calls.get('AA19AAA') ?? 0) - calls.dvla, dvsa.motRequests - calls.dvsa]).toEqual([1, 1]);
  expect((await g.store.accounts.getAccount(key('caller')))?.credits).toBe(8);
});

test('the two calls go at once: each taking 0.8 s, both answer within UPSTREAM_TIMEOUT_MS 1.3 s', async () => {
  // In turn they would need 1.6 s: the DVSA's part (its token takes 0.8 s) would be cut off.
  const g = await gateway({ UPSTREAM_TIMEOUT_MS: '1300' });
  dvla.delayMs = 800;
  dvsa.tokenDelayMs = 800;
  const xml = await (await get(g, 'AA19AAA')).text();
  expect(element(xml, 'Description')).toBe('FORD FOCUS');
  expect(vehicleJson(xml)).not.toHaveProperty('SourcesUnanswered');
});

test('the DVLA failing: the DVSA alone answers, and vehicleJson says the DVLA did not', async () => {
  const g = await gateway();
  dvla.answers.set('AA19AAA', { status: 500, body: '{}' });
  const xml = await (await get(g, 'AA19AAA')).text();
  expect(element(xml, 'Description')).toBe('FORD FOCUS');
  expect(vehicleJson(xml)).toMatchObject({
    Colour: 'Red',
    EngineSize: { CurrentValue: 1999, CurrentTextValue: '1999cc' },
    SourcesUnanswered: { dvla: 'failed' },
    Sources: { Description: 'dvsa', CarModel: 'dvsa', Colour: 'dvsa' },
  });
});

test('the DVSA failing (its token endpoint down): the DVLA alone answers, as before', async () => {
  const g = await gateway();
  dvsa.tokenDown = true;
  const xml = await (await get(g, 'AA19AAA')).text();
  expect(element(xml, 'Description')).toBe('FORD 2000cc');
  expect(xml).not.toContain('<CarModel>');
  expect(vehicleJson(xml)).toMatchObject({ SourcesUnanswered: { dvsa: 'failed' } });
});

test('a vehicle the DVSA does not hold (AA19EEE): the DVLA alone, the DVSA named as not found', async () => {
  const g = await gateway();
  const xml = await (await get(g, 'AA19EEE')).text();
  expect(element(xml, 'Description')).toBe('FORD');
  expect(vehicleJson(xml)).toMatchObject({ SourcesUnanswered: { dvsa: 'not found' } });
});

test("a vehicle the DVLA's test service does not hold (AE13SJX): the DVSA's answer alone", async () => {
  const g = await gateway();
  const xml = await (await get(g, 'AE13SJX')).text();
  expect(element(xml, 'Description')).toBe('PORSCHE 911');
  expect(element(xml, 'RegistrationYear')).toBe('2013');
  expect(xml).toMatch(
    /<EngineSize>\s*<CurrentValue>3800<\/CurrentValue>\s*<CurrentTextValue>3800cc<\/CurrentTextValue>/,
  );
  expect(vehicleJson(xml)).toMatchObject({ SourcesUnanswered: { dvla: 'not found' } });
});

test('held by neither: VEHICLE_NOT_FOUND, nothing charged', async () => {
  const g = await gateway();
  const res = await get(g, 'ZZ99ZZZ');
  expect(res.status).toBe(404);
  expect(await res.text()).toMatch(/^VEHICLE_NOT_FOUND: /);
  expect((await g.store.accounts.getAccount(key('caller')))?.credits).toBe(10);
});

test('both failing: SERVICE_UNAVAILABLE, nothing charged', async () => {
  const g = await gateway({ UPSTREAM_TIMEOUT_MS: '1000' });
  dvla.answers.set('AA19AAA', { status: 500, body: '{}' });
  dvsa.tokenDown = true;
  const res = await get(g, 'AA19AAA');
  expect(res.status).toBe(503);
  expect(await res.text()).toMatch(/^SERVICE_UNAVAILABLE: /);
  expect((await g.store.accounts.getAccount(key('caller')))?.credits).toBe(10);
});

test('UKMOT is still the DVSA alone', async () => {
  const g = await gateway();
  const res = await get(g, 'AB12CDE', 'UKMOT');
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('<TestNumber>111122223333</TestNumber>');
});
