// The DVSA token endpoint hangs (accepts the request, never answers) under a running service with
// UPSTREAM_TIMEOUT_MS=1000 (issue 43, point 3): an uncached UKMOT lookup is refused
// SERVICE_UNAVAILABLE within 1.5 s, however many come at once, and a cached answer past its TTL is
// served stale within the same bound instead of waiting out the hang. Before the hang the token
// lives 2 s, so that the service must ask for a new one while the endpoint hangs.

import { call, type Answer } from '../helpers/call';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import { DVSA_CLIENT, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';
import { recordScenario } from './scenario';

jest.setTimeout(60_000);

const BOUND_MS = 1500;
const STACK = /\n\s+at \S/;

let fake: FakeDvsa;
let srv: ServeProcess;
afterAll(async () => {
  await srv?.stop();
  await fake?.close();
});

const ukmot = async (reg: string): Promise<Answer & { ms: number }> => {
  const t = Date.now();
  const a = await call(srv.base, 'get', 'UKMOT', { RegistrationNumber: reg, username: 'tester' });
  return { ...a, ms: Date.now() - t };
};

test('a hung DVSA token endpoint: UKMOT refused within 1.5 s with UPSTREAM_TIMEOUT_MS=1000, stale answers served', async () => {
  fake = await startFakeDvsa();
  fake.expiresIn = 2;
  srv = await startServeProcess({
    DATABASE_URL: 'sqlite::memory:',
    PROVIDERS: 'store,dvsa',
    DVSA_URL: fake.apiUrl,
    DVSA_TOKEN_URL: fake.tokenUrl,
    DVSA_CLIENT_ID: DVSA_CLIENT.clientId,
    DVSA_CLIENT_SECRET: DVSA_CLIENT.clientSecret,
    DVSA_API_KEY: DVSA_CLIENT.apiKey,
    UPSTREAM_TIMEOUT_MS: '1000',
    UPSTREAM_MOT_TTL: '1',
    RATE_LIMIT: '1000000',
  });
  // Cached, then past its one-second TTL by the time the endpoint hangs.
  expect((await ukmot('AB12CDE')).status).toBe(200);
  fake.tokenHung = true;
  await new Promise((r) => setTimeout(r, 2100)); // the token is due for renewal

  const fresh = await Promise.all(['NEW1234', 'HG01AAA', 'HG02AAA', 'HG03AAA'].map(ukmot));
  const stale = await ukmot('AB12CDE');
  const later = await ukmot('HG04AAA');
  for (const a of [...fresh, later]) {
    expect(a.status).toBe(503);
    expect(a.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(a.body).toMatch(/^SERVICE_UNAVAILABLE: .*the dvsa upstream is not answering/);
    expect(a.ms).toBeLessThan(BOUND_MS);
  }
  expect(stale.status).toBe(200);
  expect(stale.body).toContain('111122223333');
  expect(stale.ms).toBeLessThan(BOUND_MS);
  expect(fake.tokenRequests).toBeGreaterThanOrEqual(2);
  expect(srv.output()).toMatch(/"message":"upstream dvsa is failing"/);
  expect(srv.output()).not.toMatch(STACK);

  const slowest = Math.max(...[...fresh, later].map((a) => a.ms));
  recordScenario({
    scenario: 'DVSA token endpoint hung',
    answered: `${fresh.length + 1} uncached UKMOT: 503 SERVICE_UNAVAILABLE, slowest ${slowest} ms (UPSTREAM_TIMEOUT_MS=1000); stale cached UKMOT: 200 in ${stale.ms} ms`,
    charged: 'n/a (no credited account; refusals are never charged)',
    logged: "one 'upstream dvsa is failing' line with the token endpoint's time-out, 0 stack traces",
  });
});
