// Credits are reserved before an upstream call (issue 43, point 7): a caller with N credits has at
// most N paid upstream calls in flight, none at 0; and one caller's burst takes at most its share
// of UPSTREAM_CONCURRENCY (half of it, docs/upstream.md), so another caller's lookup is served
// meanwhile. The charge after the answer is as before: one credit per found answer.

import { createHash } from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server';
import { AA19AAA, DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

const plates = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
const records = Object.fromEntries(
  [...plates('ONE', 101), ...plates('BIG', 40), 'OTHER1', 'OTHER2'].map((p) => [
    p,
    { ...AA19AAA, registrationNumber: p },
  ]),
);

let dvla: FakeDvla;
let svc: TestServer;

beforeAll(async () => {
  dvla = await startFakeDvla({ records });
  svc = await startServer(
    {
      PROVIDERS: 'dvla',
      DVLA_URL: dvla.url,
      DVLA_API_KEY: DVLA_TEST_KEY,
      USERNAME_POLICY: 'registered',
      UPSTREAM_CONCURRENCY: '8',
      UPSTREAM_TIMEOUT_MS: '5000',
    },
    { sample: false },
  );
  await svc.store.accounts.putAccount({ username: key('one'), credits: 1 });
  await svc.store.accounts.putAccount({ username: key('big'), credits: 1000 });
  await svc.store.accounts.putAccount({ username: key('other'), credits: 10 });
});
afterAll(async () => {
  await svc.close();
  await dvla.close();
});

const get = async (reg: string, username: string) => {
  const res = await fetch(`${svc.url}/api/reg.asmx/Check?RegistrationNumber=${reg}&username=${username}`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
};
const callsTo = (prefix: string) => [...dvla.calls].filter(([p]) => p.startsWith(prefix)).length;
const credits = async (u: string) => (await svc.store.accounts.getAccount(key(u)))?.credits;

test('1 credit, 100 concurrent uncached lookups: at most 2 upstream calls, one answer charged; another caller served', async () => {
  dvla.delayMs = 1500;
  const burst = Promise.all(plates('ONE', 100).map((p) => get(p, 'one')));
  const other = await get('OTHER1', 'other');
  const answers = await burst;
  expect(other.status).toBe(200);
  expect(callsTo('ONE')).toBeLessThanOrEqual(2);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
  // The rest refused, none of them with a 5xx: wait a second (the credit is held), or out of credit.
  for (const a of answers.filter((x) => x.status !== 200)) {
    expect(a.status).toBe(429);
    expect(a.body).toMatch(/^(RATE_LIMITED: Too many lookups at once: .*retry in 1 s|OUT_OF_CREDIT: )/);
  }
  expect(await credits('one')).toBe(0);
  expect(await credits('other')).toBe(9);
  // At 0 credits: refused before any upstream call.
  dvla.delayMs = 0;
  const before = dvla.totalCalls();
  const after = await get('ONE100', 'one');
  expect(after.status).toBe(429);
  expect(after.body).toMatch(/^OUT_OF_CREDIT: /);
  expect(dvla.totalCalls()).toBe(before);
});

test("one caller's burst takes at most half of UPSTREAM_CONCURRENCY; another caller's lookup is served meanwhile", async () => {
  dvla.delayMs = 1500;
  const burst = Promise.all(plates('BIG', 40).map((p) => get(p, 'big')));
  const other = await get('OTHER2', 'other');
  const answers = await burst;
  expect(other.status).toBe(200);
  // UPSTREAM_CONCURRENCY 8: 4 fetches at once for one caller; the other 36 refused at once, asked to retry in 1 s.
  expect(callsTo('BIG')).toBe(4);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
  const refused = answers.filter((a) => a.status !== 200);
  expect(refused).toHaveLength(36);
  for (const r of refused) {
    expect(r.status).toBe(429);
    expect(r.retryAfter).toBe('1');
    expect(r.body).toMatch(/^RATE_LIMITED: Too many lookups at once: username 'big' has 4 upstream lookups in flight/);
  }
  // One credit per answer, nothing for a refusal.
  expect(await credits('big')).toBe(996);
  // Once they are answered, the caller may fetch again.
  dvla.delayMs = 0;
  expect((await get('BIG039', 'big')).status).toBe(200);
});
