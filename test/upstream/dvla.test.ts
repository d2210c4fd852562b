// The dvla provider through the whole service: PROVIDERS=dvla against a local server speaking the
// DVLA Vehicle Enquiry Service's documented format and test registrations (test/helpers/upstream-dvla.ts).
// Expectations come from the issue (statuses, charging, coalescing) and docs/upstream.md's mapping table.

import { createHash } from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server';
import { AA19AAA, DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';
import { httpGet } from '../helpers/call';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

let dvla: FakeDvla;
let svc: TestServer;

const env = (url: string, extra: Record<string, string> = {}) => ({
  PROVIDERS: 'store,dvla',
  DVLA_URL: url,
  DVLA_API_KEY: DVLA_TEST_KEY,
  UPSTREAM_TIMEOUT_MS: '1500',
  UPSTREAM_BREAKER_FAILURES: '1000',
  ...extra,
});

beforeAll(async () => {
  dvla = await startFakeDvla({ retryAfterS: 0 });
  svc = await startServer(env(dvla.url));
});
afterAll(async () => {
  await svc.close();
  await dvla.close();
});
beforeEach(() => {
  dvla.delayMs = 0;
  dvla.answers.clear();
});

const get = (base: string, reg: string, op = 'Check', username = 'tester') =>
  httpGet(base, op, { RegistrationNumber: reg, username });

function element(xml: string, path: string): string | undefined {
  // path: Parent/Child, text of the first match inside the first Parent.
  const [parent, child] = path.split('/');
  const inner = child ? (new RegExp(`<${parent}>([\\s\\S]*?)</${parent}>`).exec(xml)?.[1] ?? '') : xml;
  const name = child ?? parent;
  const m = new RegExp(`<${name}(?: [^>]*)?>([^<]*)</${name}>`).exec(inner);
  return m ? m[1] : undefined;
}

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe('dvla: the mapping of every field (docs/upstream.md, DVLA field mapping)', () => {
  let xml: string;
  beforeAll(async () => {
    const res = await get(svc.url, 'AA19 AAA');
    expect(res.status).toBe(200);
    xml = await res.text();
  });

  test.each([
    ['Description', 'FORD 2000cc'],
    ['RegistrationYear', '2019'],
    ['ManufactureYearFrom', '2019'],
    ['ManufactureYearTo', '2019'],
    ['CarMake/CurrentTextValue', 'FORD'],
    ['EngineSize/CurrentValue', '2000'],
    ['EngineSize/CurrentTextValue', '2000cc'],
    ['FuelType/CurrentTextValue', 'PETROL'],
    ['MakeDescription', 'FORD'],
  ])('%s is %s', (path, want) => {
    expect(element(xml, path)).toBe(want);
  });

  test('what the DVLA does not hold is left empty: no CarModel, nil body style, doors, seats, transmission', () => {
    expect(xml).not.toContain('<CarModel>');
    for (const name of ['BodyStyle', 'NumberOfDoors', 'NumberOfSeats', 'Transmission']) {
      expect(xml).toMatch(
        new RegExp(`<${name}>\\s*<CurrentValue type="null" />\\s*<CurrentTextValue type="null" />\\s*</${name}>`),
      );
    }
  });

  test('vehicleJson carries colour, CO2, tax and MOT status, and the whole DVLA record under "dvla"', () => {
    const v = JSON.parse(unescape(element(xml, 'vehicleJson') ?? '')) as Record<string, unknown>;
    expect(v.dvla).toEqual(AA19AAA);
    expect(v.Colour).toBe('RED');
    expect(v.Co2Emissions).toBe(300);
    expect(v.TaxStatus).toBe('Taxed');
    expect(v.TaxDueDate).toBe('2027-01-01');
    expect(v.MotStatus).toBe('No details held by DVLA');
    expect(v.FirstRegistered).toBe('2019-03');
  });

  test('the key went in x-api-key, the registration without its space', () => {
    expect(dvla.keys.every((k) => k === DVLA_TEST_KEY)).toBe(true);
    expect(dvla.calls.get('AA19AAA')).toBe(1);
  });
});

describe('dvla: every documented status', () => {
  test('400 (ER19BAD) is INVALID_PARAMETER', async () => {
    const res = await get(svc.url, 'ER19BAD');
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^INVALID_PARAMETER: /);
  });

  test('404 (ER19NFD) is VEHICLE_NOT_FOUND, and the not-found is cached', async () => {
    const res = await get(svc.url, 'ER19NFD');
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/^VEHICLE_NOT_FOUND: /);
    expect((await get(svc.url, 'ER19NFD')).status).toBe(404);
    expect(dvla.calls.get('ER19NFD')).toBe(1);
  });

  test.each([
    ['ER19THR', 429],
    ['ER19ERR', 500],
    ['ER19MNT', 503],
  ])('%s (%i) is retried twice, then SERVICE_UNAVAILABLE with Retry-After', async (reg) => {
    const res = await get(svc.url, reg);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const text = await res.text();
    expect(text).toMatch(/^SERVICE_UNAVAILABLE: /);
    expect(text).not.toContain(DVLA_TEST_KEY);
    expect(dvla.calls.get(reg)).toBe(3);
  });
});

describe('dvla: bad answers are upstream failures, never cached, never a 500', () => {
  test.each([
    ['not JSON', { status: 200, body: '<html>oops</html>' }],
    ['a JSON array', { status: 200, body: '[1,2]' }],
    [
      'a make with a character XML cannot carry',
      { status: 200, body: JSON.stringify({ ...AA19AAA, make: 'FO\u0001RD' }) },
    ],
    [
      'an answer over UPSTREAM_MAX_BYTES',
      { status: 200, body: JSON.stringify({ ...AA19AAA, filler: 'x'.repeat(1_100_000) }) },
    ],
    ['a redirect', { status: 302, body: '', headers: { location: 'http://example.com/' } }],
  ])('%s', async (_what, answer) => {
    const reg = `BAD${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
    dvla.answers.set(reg, answer);
    const res = await get(svc.url, reg);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/^SERVICE_UNAVAILABLE: /);
    dvla.answers.set(reg, { status: 200, body: JSON.stringify({ ...AA19AAA, registrationNumber: reg }) });
    expect((await get(svc.url, reg)).status).toBe(200);
  });
});

describe('dvla: the chain', () => {
  test('imported records win: a stored record is answered and the DVLA is not asked', async () => {
    const batch = await svc.store.beginImport();
    await batch.put({
      operation: 'Check',
      registration: 'AA19PPP',
      state: '',
      payload: JSON.stringify({ Description: 'IMPORTED' }),
    });
    await batch.commit();
    const res = await get(svc.url, 'AA19PPP');
    expect(element(await res.text(), 'Description')).toBe('IMPORTED');
    expect(dvla.calls.get('AA19PPP')).toBeUndefined();
  });

  test('an operation the DVLA does not answer is not asked of it', async () => {
    const res = await get(svc.url, 'AA19EEE', 'CheckIreland');
    expect(res.status).toBe(404);
    expect(dvla.calls.get('AA19EEE')).toBeUndefined();
  });

  test('100 concurrent requests for one uncached plate make one upstream call', async () => {
    dvla.delayMs = 300;
    const answers = await Promise.all(Array.from({ length: 100 }, () => get(svc.url, 'AA19EEE')));
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
    expect(dvla.calls.get('AA19EEE')).toBe(1);
  });

  test('a slow upstream: refused with SERVICE_UNAVAILABLE once UPSTREAM_TIMEOUT_MS is spent', async () => {
    dvla.delayMs = 5000;
    dvla.answers.set('SLOW1', { status: 200, body: JSON.stringify(AA19AAA) });
    const res = await get(svc.url, 'SLOW1');
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/^SERVICE_UNAVAILABLE: .*the dvla upstream is not answering/);
  });
});

describe('dvla: money', () => {
  let paid: TestServer;
  beforeAll(async () => {
    paid = await startServer(env(dvla.url, { USERNAME_POLICY: 'registered' }));
    await paid.store.accounts.putAccount({ username: key('garage'), credits: 10 });
  });
  afterAll(() => paid.close());
  const credits = async () => (await paid.store.accounts.getAccount(key('garage')))?.credits;

  test('one credit per answered lookup whatever the source; nothing for a failure or a not-found; the DVLA asked once within the TTL', async () => {
    dvla.answers.set('PAY1', { status: 200, body: JSON.stringify({ ...AA19AAA, registrationNumber: 'PAY1' }) });
    expect((await get(paid.url, 'PAY1', 'Check', 'garage')).status).toBe(200);
    expect(await credits()).toBe(9);
    expect((await get(paid.url, 'PAY1', 'Check', 'garage')).status).toBe(200);
    expect(await credits()).toBe(8);
    expect(dvla.calls.get('PAY1')).toBe(1);
    expect((await get(paid.url, 'RG11 ABC', 'Check', 'garage')).status).toBe(200);
    expect(await credits()).toBe(7);
    expect((await get(paid.url, 'ER19ERR', 'Check', 'garage')).status).toBe(503);
    expect((await get(paid.url, 'ER19NFD', 'Check', 'garage')).status).toBe(404);
    expect((await get(paid.url, 'ER19BAD', 'Check', 'garage')).status).toBe(400);
    expect(await credits()).toBe(7);
  });
});

describe('dvla: operability', () => {
  test('metrics count calls by outcome and cache hits, and never carry the key', async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).toMatch(/reglookup_upstream_calls_total\{provider="dvla",outcome="found"\} \d+/);
    expect(text).toMatch(/reglookup_upstream_cache_total\{operation="Check",result="hit"\} \d+/);
    expect(text).toMatch(/reglookup_upstream_breaker_state\{provider="dvla",state="closed"\} 1/);
    expect(text).not.toContain(DVLA_TEST_KEY);
  });

  test('/readyz is ready, names the provider and not the key', async () => {
    const res = await fetch(`${svc.url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(JSON.parse(body).checks['upstream:dvla']).toBe('ok');
    expect(body).not.toContain(DVLA_TEST_KEY);
  });
});
