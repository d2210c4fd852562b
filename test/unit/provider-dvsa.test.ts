// The dvsa provider (issue 28, deliverable 3) against a local DVSA MOT History API with its token
// endpoint (test/helpers/upstream-dvsa.ts): the MOT answer mapped to UKMOT's record (docs/data.md;
// expected record written by hand), the OAuth 2.0 token fetched once however many calls wait,
// refreshed before it expires and once after a 401, the statuses to failure kinds, secrets kept out
// of every message, and the published quota (15 a second, 500,000 a day) taken before each call, in
// memory. (Shared through Redis: test/redis/provider-dvsa.test.ts.)

import net from 'node:net';
import { createDvsaProvider, refusesToken, type DvsaProvider } from '../../src/providers/dvsa';
import { UpstreamFailure } from '../../src/providers/provider';
import { motProblems } from '../../src/service/records';
import { fetchContext } from '../helpers/upstream-http';
import { DVSA_CLIENT, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';

let fake: FakeDvsa;
const providers: DvsaProvider[] = [];

beforeAll(async () => {
  fake = await startFakeDvsa();
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await fake.close();
});
beforeEach(() => {
  fake.expiresIn = 3599;
  fake.tokenDelayMs = 0;
  fake.tokenDown = false;
});

/** A quota no test but the quota's own reaches. */
const ROOMY = { perSecond: 100_000, burst: 10, perDay: 1_000_000 };

function provider(
  deps: Parameters<typeof createDvsaProvider>[1] = { quota: ROOMY },
  client: Partial<typeof DVSA_CLIENT> = {},
): DvsaProvider {
  const c = { ...DVSA_CLIENT, ...client };
  const p = createDvsaProvider(
    {
      url: fake.apiUrl,
      tokenUrl: fake.tokenUrl,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      scope: c.scope,
      apiKey: c.apiKey,
    },
    deps,
  );
  providers.push(p);
  return p;
}

const mot = (p: DvsaProvider, reg: string) => p.fetch('UKMOT', reg, '', fetchContext());
const failureOf = async (promise: Promise<unknown>) =>
  (await promise.then(() => null).catch((e: unknown) => e)) as UpstreamFailure;

test('answers UKMOT only', () => {
  const p = provider();
  expect(p.name).toBe('dvsa');
  expect(['UKMOT', 'Check', 'CheckNetherlands'].map((op) => p.answers(op))).toEqual([true, false, false]);
});

test('an MOT history: tests with date, expiry, result, odometer and unit, number; defects sorted into advisories and failures', async () => {
  const answer = await mot(provider(), 'AB12CDE');
  expect(answer).toEqual({
    found: true,
    record: {
      make: 'FORD',
      model: 'FOCUS',
      tests: [
        {
          TestDate: '2025-08-20',
          ExpiryDate: '2026-08-19',
          Result: 'Pass',
          Odometer: '61234 mi',
          TestNumber: '111122223333',
          FailureReasons: [],
          Advisories: [
            'Nearside Front Tyre worn close to legal limit (5.2.3 (e))',
            'Offside Headlamp aim slightly high (4.1.2 (a))',
          ],
        },
        {
          TestDate: '2025-08-18',
          Result: 'Fail',
          Odometer: '61200 mi',
          TestNumber: '444455556666',
          FailureReasons: [
            'Nearside Rear Brake pipe excessively corroded (1.1.11 (c))',
            'Offside Front Tyre has a cut exposing the cords (5.2.3 (d))',
            'Registration plate missing (0.1 (a))',
            'Windscreen wiper does not clear the windscreen',
          ],
          Advisories: [],
        },
      ],
      extendedInformation: [
        ['Colour', 'Blue'],
        ['FuelType', 'Petrol'],
        ['EngineSize', '1596'],
        ['FirstUsedDate', '2012-03-01'],
        ['RegistrationDate', '2012-03-01'],
        ['ManufactureDate', '2012-02-20'],
        ['OutstandingRecall', 'No'],
      ],
    },
  });
  if (answer.found) expect(motProblems(answer.record)).toEqual([]);
});

test('a vehicle too new for a test: no tests, its due date kept', async () => {
  const answer = await mot(provider(), 'NEW1234');
  if (!answer.found) throw new Error('not found');
  expect(answer.record.tests).toEqual([]);
  expect(answer.record.extendedInformation).toContainEqual(['MotTestDueDate', '2028-01-09']);
});

test('the token request carries the client credentials and scope; the MOT call the token and the API key', async () => {
  const before = fake.tokenBodies.length;
  await mot(provider(), 'AB12CDE');
  const form = fake.tokenBodies[before];
  expect([form.get('grant_type'), form.get('client_id'), form.get('client_secret'), form.get('scope')]).toEqual([
    'client_credentials',
    DVSA_CLIENT.clientId,
    DVSA_CLIENT.clientSecret,
    DVSA_CLIENT.scope,
  ]);
});

test('statuses: 404 not found, 400 invalid, 429 transient with Retry-After, 500 transient', async () => {
  const p = provider();
  expect(await mot(p, 'ZZ99ZZZ')).toEqual({ found: false });
  const kinds = await Promise.all(['ER19BAD', 'ER19THR', 'ER19ERR'].map(async (r) => failureOf(mot(p, r))));
  expect(kinds.map((e) => [e.provider, e.kind, e.retryAfterS])).toEqual([
    ['dvsa', 'invalid', undefined],
    ['dvsa', 'transient', 3],
    ['dvsa', 'transient', undefined],
  ]);
});

test('50 concurrent calls with no token yet make one token request', async () => {
  const p = provider();
  fake.tokenDelayMs = 200;
  const before = fake.tokenRequests;
  const answers = await Promise.all(Array.from({ length: 50 }, () => mot(p, 'AB12CDE')));
  expect(answers.every((a) => a.found)).toBe(true);
  expect(fake.tokenRequests - before).toBe(1);
  expect(p.tokens.requests).toBe(1);
});

test('a token is used until shortly before it expires, then refreshed once for the calls waiting', async () => {
  let now = 1_000_000;
  const p = provider({ now: () => now, quota: ROOMY });
  fake.expiresIn = 600;
  await mot(p, 'AB12CDE');
  now += 500_000; // 100 s left: still fresh
  await mot(p, 'AB12CDE');
  expect(p.tokens.requests).toBe(1);
  now += 90_000; // 10 s left: inside the refresh margin
  fake.tokenDelayMs = 100;
  await Promise.all(Array.from({ length: 20 }, () => mot(p, 'AB12CDE')));
  expect(p.tokens.requests).toBe(2);
});

test('a 401 with a stale token: one refresh and one retry, however many calls held it', async () => {
  const p = provider();
  await mot(p, 'AB12CDE');
  expect(p.tokens.requests).toBe(1);
  fake.revokeAll();
  fake.tokenDelayMs = 100;
  const answers = await Promise.all(Array.from({ length: 20 }, () => mot(p, 'AB12CDE')));
  expect(answers.every((a) => a.found)).toBe(true);
  expect(p.tokens.requests).toBe(2);
});

test('the token endpoint down: a transient failure naming it, and no secret in the message', async () => {
  fake.tokenDown = true;
  const e = await failureOf(mot(provider(), 'AB12CDE'));
  expect([e.provider, e.kind]).toEqual(['dvsa', 'transient']);
  expect(e.message).toMatch(/token endpoint/);
  for (const s of [DVSA_CLIENT.clientSecret, DVSA_CLIENT.apiKey, DVSA_CLIENT.clientId])
    expect(e.message).not.toContain(s);
});

test('wrong client credentials: a permanent failure naming the variables, not their values', async () => {
  const e = await failureOf(mot(provider({ quota: ROOMY }, { clientSecret: 'wrong-secret-xyz' }), 'AB12CDE'));
  expect([e.provider, e.kind]).toEqual(['dvsa', 'permanent']);
  expect(e.message).toMatch(/DVSA_CLIENT_SECRET/);
  expect(e.message).not.toContain('wrong-secret-xyz');
});

test('a wrong API key (403): permanent, the key not in the message', async () => {
  const e = await failureOf(mot(provider({ quota: ROOMY }, { apiKey: 'bad-key-xyz' }), 'AB12CDE'));
  expect([e.provider, e.kind]).toEqual(['dvsa', 'permanent']);
  expect(e.message).not.toContain('bad-key-xyz');
});

test('the per-second quota: calls over it are refused before calling DVSA, transient with a Retry-After', async () => {
  const p = provider({ quota: { perSecond: 3, burst: 10, perDay: 1000 } });
  const before = fake.motRequests;
  const outcomes = await Promise.all(
    Array.from({ length: 10 }, () =>
      mot(p, 'AB12CDE').then(
        () => null,
        (e: unknown) => e as UpstreamFailure,
      ),
    ),
  );
  const refused = outcomes.filter((e): e is UpstreamFailure => e !== null);
  // However the calls fall across one-second windows, at most 6 of 10 get through.
  expect(refused.length).toBeGreaterThanOrEqual(4);
  for (const e of refused) expect([e.kind, e.retryAfterS! >= 1]).toEqual(['transient', true]);
  expect(fake.motRequests - before).toBe(10 - refused.length);
});

test('the daily quota: spent, the call is refused for hours, not seconds', async () => {
  // Three a day: the token request and two calls.
  const p = provider({ quota: { perSecond: 15, burst: 10, perDay: 3 } });
  await mot(p, 'AB12CDE');
  await mot(p, 'AB12CDE');
  const e = await failureOf(mot(p, 'AB12CDE'));
  expect(e.kind).toBe('transient');
  expect(e.retryAfterS).toBeGreaterThan(3600);
});

/** A context with the chain's deadline: the signal and the time it aborts at. */
function deadlineContext(ms: number) {
  return { ...fetchContext(ms), deadline: Date.now() + ms };
}

describe('a 403 about the token (the API documents MOTH-FB-02 expired, MOTH-FB-04 missing)', () => {
  test.each([
    ['{"errorCode":"MOTH-FB-02","errorMessage":"The access token sent with the request has expired"}', true],
    ['{"errorCode":"MOTH-FB-04","errorMessage":"The access token is missing from the request"}', true],
    ['{"message":"The access token sent with the request has expired"}', true],
    ['{"errorCode":"MOTH-FB-03","errorMessage":"The API key sent with the request is not recognised"}', false],
    ['{"errorCode":"MOTH-FB-01","errorMessage":"You do not have permission to access this endpoint"}', false],
    ['{"message":"Forbidden"}', false],
    ['Forbidden', false],
  ])('%s is about the token: %s', (body, expected) => {
    expect(refusesToken(body)).toBe(expected);
  });

  test('tokens expired (403 MOTH-FB-02): one refresh and one retry, however many calls held it', async () => {
    const p = provider();
    await mot(p, 'AB12CDE');
    fake.expireAll();
    fake.tokenDelayMs = 100;
    const answers = await Promise.all(Array.from({ length: 20 }, () => mot(p, 'AB12CDE')));
    expect(answers.every((a) => a.found)).toBe(true);
    expect(p.tokens.requests).toBe(2);
  });

  test('a 403 for the API key is not retried with a new token', async () => {
    const p = provider({ quota: ROOMY }, { apiKey: 'bad-key-xyz' });
    const e = await failureOf(mot(p, 'AB12CDE'));
    expect(e.kind).toBe('permanent');
    expect(p.tokens.requests).toBe(1);
  });
});

test('a token refresh and its retry each take a call from the quota (issue 43, point 8)', async () => {
  // Five calls a day: the first lookup takes two (its call, the token), the second three (its call,
  // the refresh, the retry); a third finds the day spent.
  const p = provider({ quota: { perSecond: 100, burst: 10, perDay: 5 } });
  expect((await mot(p, 'AB12CDE')).found).toBe(true);
  fake.expireAll();
  expect((await mot(p, 'AB12CDE')).found).toBe(true);
  const e = await failureOf(mot(p, 'AB12CDE'));
  expect([e.kind, e.retryAfterS! > 3600]).toEqual(['transient', true]);
});

test('20 concurrent lookups of distinct plates under the published quota (15/s, burst 10): all answered within 2 s', async () => {
  const p = provider({ quota: { perSecond: 15, burst: 10, perDay: 500_000 } });
  const before = fake.motTimes.length;
  const t0 = Date.now();
  const plates = Array.from({ length: 20 }, (_, i) => `QW${String(i).padStart(2, '0')}ABC`);
  const answers = await Promise.all(plates.map((r) => p.fetch('UKMOT', r, '', deadlineContext(5000))));
  const took = Date.now() - t0;
  expect(answers).toHaveLength(20);
  expect(took).toBeLessThan(2000);
  const times = fake.motTimes.slice(before);
  expect(times).toHaveLength(20);
  // Never over 15 a second: the calls of the first second are at most 15.
  expect(times.filter((t) => t < times[0] + 900).length).toBeLessThanOrEqual(15);
});

test('over the per-second quota with too little time left: refused at once, told to come back in a second', async () => {
  const p = provider({ quota: { perSecond: 2, burst: 10, perDay: 1000 } });
  await mot(p, 'AB12CDE'); // the token and the call: the second is spent
  const t0 = Date.now();
  const e = await failureOf(p.fetch('UKMOT', 'AB12CDE', '', deadlineContext(100)));
  expect(Date.now() - t0).toBeLessThan(100);
  expect([e.kind, e.retryAfterS]).toEqual(['transient', 1]);
});

test('a token endpoint that accepts and never answers: the call fails at its deadline, not later', async () => {
  const sockets: net.Socket[] = [];
  const hung = net.createServer((s) => sockets.push(s));
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  try {
    const { clientId, clientSecret, scope, apiKey } = DVSA_CLIENT;
    const p = createDvsaProvider(
      {
        url: fake.apiUrl,
        tokenUrl: `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}/token`,
        clientId,
        clientSecret,
        scope,
        apiKey,
      },
      { quota: ROOMY },
    );
    providers.push(p);
    const t0 = Date.now();
    const e = await failureOf(p.fetch('UKMOT', 'AB12CDE', '', deadlineContext(500)));
    const took = Date.now() - t0;
    expect(e.kind).toBe('transient');
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(900);
  } finally {
    sockets.forEach((s) => s.destroy());
    await new Promise<void>((r) => hung.close(() => r()));
  }
});
