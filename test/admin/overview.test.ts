// GET /admin/api/overview (docs/administration.md, the console's service overview): the last hour's
// lookups and refusals a minute and each minute's p99, from readings the admin listener keeps (here
// every 300 ms instead of every minute), the upstream providers' breakers and calls, and lookups
// only: a mistaken GET /admin/api/users on the public port, a help page and a probe are not lookups.

import { createHash } from 'node:crypto';
import { client, startAdmin, TOKENS, type TestAdmin } from '../helpers/admin';
import { metrics } from '../../src/ops/metrics';
import { startServer, type TestServer } from '../helpers/server';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

jest.setTimeout(60_000);

interface Overview {
  requests: Record<string, number>;
  latency: { p50: number | null; p99: number | null };
  minutes: { at: number; ms: number; lookups: number; refusals: number; p99: number | null }[];
  upstreams: { provider: string; breaker: string; calls: Record<string, number> }[];
}

let dvla: FakeDvla;
let srv: TestServer;
let admin: TestAdmin;
const EVERY_MS = 300;

beforeAll(async () => {
  dvla = await startFakeDvla();
  srv = await startServer({
    PROVIDERS: 'store,dvla',
    DVLA_URL: dvla.url,
    DVLA_API_KEY: DVLA_TEST_KEY,
    UPSTREAM_BREAKER_FAILURES: '1',
    UPSTREAM_BREAKER_OPEN_MS: '600000',
    UPSTREAM_TIMEOUT_MS: '3000',
  });
  await srv.store.accounts.putAccount({ username: key('one-credit'), credits: 1 });
  admin = await startAdmin(srv.store, {
    metricsText: () => metrics().registry.metrics(),
    overviewEveryMs: EVERY_MS,
  });
  // The first reading is the one the minutes start from.
  await new Promise((r) => setTimeout(r, EVERY_MS));
});
afterAll(async () => {
  await admin?.close();
  await srv?.close();
  await dvla?.close();
});

/** The overview once a reading has been kept after everything sent so far. */
async function overviewAfterAReading(): Promise<Overview> {
  await new Promise((r) => setTimeout(r, EVERY_MS * 2));
  const res = await client(admin.url, TOKENS[0].token)('GET', '/admin/api/overview');
  expect(res.status).toBe(200);
  return res.json as Overview;
}

test('lookups and refusals over the minutes, their p99, and the upstreams: lookups only', async () => {
  const get = (path: string) => fetch(`${srv.url}${path}`);
  const lookup = (reg: string, username = 'anyone') =>
    get(`/api/reg.asmx/Check?RegistrationNumber=${reg}&username=${username}`);
  // From the store twice; from DVLA; charged, then refused for credit (docs/interface.md: OUT_OF_CREDIT, 429);
  // DVLA's test plate for its 500, which opens its breaker (UPSTREAM_BREAKER_FAILURES=1): SERVICE_UNAVAILABLE.
  expect((await lookup('RG11ABC')).status).toBe(200);
  expect((await lookup('RG11ABC')).status).toBe(200);
  expect((await lookup('AA19AAA')).status).toBe(200);
  expect((await lookup('RG11ABC', 'one-credit')).status).toBe(200);
  expect((await lookup('RG11ABC', 'one-credit')).status).toBe(429);
  expect((await lookup('ER19ERR')).status).toBe(503);
  // Not lookups: the admin API's path asked of the public port, a help page, a probe, a scrape.
  expect((await get('/admin/api/users')).status).toBe(404);
  expect((await get('/api/reg.asmx?op=Check')).status).toBe(200);
  expect((await get('/readyz')).status).toBe(200);
  expect((await get('/metrics')).status).toBe(200);

  const o = await overviewAfterAReading();
  expect(o.minutes.reduce((t, m) => t + m.lookups, 0)).toBe(6);
  expect(o.minutes.reduce((t, m) => t + m.refusals, 0)).toBe(1);
  expect(o.minutes.every((m) => m.ms > 0 && m.at > 0)).toBe(true);
  expect(o.minutes.some((m) => m.lookups > 0 && m.p99 !== null && m.p99 > 0)).toBe(true);
  expect(o.requests.UNKNOWN_OPERATION).toBeUndefined();
  expect(o.requests).toMatchObject({ ok: 4, OUT_OF_CREDIT: 1, SERVICE_UNAVAILABLE: 1 });
  expect(o.upstreams).toHaveLength(1);
  expect(o.upstreams[0].provider).toBe('dvla');
  expect(o.upstreams[0].breaker).toBe('open');
  expect(o.upstreams[0].calls.found).toBe(1);
  // The failed call, counted as the failure it met (docs/upstream.md: transient, or breaker_open once it opened).
  const failed = Object.entries(o.upstreams[0].calls).filter(([k]) => k !== 'found');
  expect(failed.map(([k]) => k).every((k) => ['transient', 'breaker_open'].includes(k))).toBe(true);
  expect(failed.reduce((t, [, n]) => t + n, 0)).toBeGreaterThanOrEqual(1);
});

test('readings keep coming: a later lookup is in a later minute', async () => {
  const before = await overviewAfterAReading();
  const total = (o: Overview) => o.minutes.reduce((t, m) => t + m.lookups, 0);
  expect((await fetch(`${srv.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=later`)).status).toBe(200);
  const after = await overviewAfterAReading();
  expect(total(after)).toBe(total(before) + 1);
  expect(after.minutes[after.minutes.length - 1].at).toBeGreaterThan(before.minutes[before.minutes.length - 1].at);
});
