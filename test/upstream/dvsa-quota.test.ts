// The DVSA's published quota through the chain (issue 42, point 3): lookups over the per-second
// quota wait their turn within UPSTREAM_TIMEOUT_MS instead of being refused (20 concurrent distinct
// plates against 15 a second, burst 10: all answered within 2 s), and when the quota cannot be had
// in time (the day spent) Retry-After says when it frees, not a fixed 30 s.

import { OPERATIONS } from '../../src/contract/operations';
import { createDvsaProvider, type DvsaProvider } from '../../src/providers/dvsa';
import type { DvsaQuotaLimits } from '../../src/providers/dvsa-quota';
import type { LookupError } from '../../src/service/errors';
import { UpstreamChain, type ChainOptions } from '../../src/service/upstream';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { fetchHttp } from '../helpers/upstream-http';
import { DVSA_CLIENT, startFakeDvsa, type FakeDvsa } from '../helpers/upstream-dvsa';

const UKMOT = OPERATIONS.find((o) => o.name === 'UKMOT')!;
const OPTIONS: ChainOptions = {
  ttlS: 3600,
  motTtlS: 3600,
  notFoundTtlS: 3600,
  staleIfErrorS: 0,
  timeoutMs: 5000,
  concurrency: 16,
  breakerFailures: 5,
  breakerOpenMs: 30_000,
};

let fake: FakeDvsa;
const providers: DvsaProvider[] = [];
const stores: VehicleStore[] = [];
beforeAll(async () => {
  fake = await startFakeDvsa();
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await Promise.all(stores.map((s) => s.close()));
  await fake.close();
});

function chainWith(quota: DvsaQuotaLimits): UpstreamChain {
  const { clientId, clientSecret, scope, apiKey } = DVSA_CLIENT;
  const p = createDvsaProvider(
    { url: fake.apiUrl, tokenUrl: fake.tokenUrl, clientId, clientSecret, scope, apiKey },
    { quota },
  );
  providers.push(p);
  const store = openStore('sqlite::memory:');
  stores.push(store);
  return new UpstreamChain(store, [p], fetchHttp, OPTIONS);
}

const lookup = (chain: UpstreamChain, reg: string) =>
  chain.lookup(UKMOT, { operation: 'UKMOT', registration: reg, state: '' });

test('20 concurrent UKMOT lookups of distinct plates (15/s, burst 10): all answered within 2 s', async () => {
  const chain = chainWith({ perSecond: 15, burst: 10, perDay: 500_000 });
  const t0 = Date.now();
  const plates = ['AB12CDE', ...Array.from({ length: 19 }, (_, i) => `QA${String(i).padStart(2, '0')}XYZ`)];
  const answers = await Promise.all(plates.map((r) => lookup(chain, r)));
  expect(Date.now() - t0).toBeLessThan(2000);
  expect(answers[0].payload).toContain('111122223333');
  expect(answers.slice(1).every((a) => a.payload === null)).toBe(true);
});

test('the daily quota spent: SERVICE_UNAVAILABLE with Retry-After until it frees (hours, not 30 s)', async () => {
  // Two a day: the token request and one call.
  const chain = chainWith({ perSecond: 15, burst: 10, perDay: 2 });
  await lookup(chain, 'AB12CDE');
  const t0 = Date.now();
  const e = (await lookup(chain, 'NEW1234').catch((x: unknown) => x)) as LookupError;
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(e.code).toBe('SERVICE_UNAVAILABLE');
  expect(e.retryAfter).toBeGreaterThan(3600);
  expect(e.message).toMatch(/the dvsa upstream is busy/);
  expect(e.message).toContain(`retry in ${e.retryAfter} s`);
});
