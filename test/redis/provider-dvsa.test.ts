// The dvsa provider's published quota (500,000 calls a day) shared through Redis by every instance
// (docs/upstream.md): the machine's Redis on 127.0.0.1:6379, with a key prefix of this run's own,
// against a local DVSA MOT History API (test/helpers/upstream-dvsa.ts).

import { createDvsaProvider, type DvsaProvider } from '../../src/providers/dvsa';
import { UpstreamFailure } from '../../src/providers/provider';
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

function provider(deps: Parameters<typeof createDvsaProvider>[1]): DvsaProvider {
  const { clientId, clientSecret, scope, apiKey } = DVSA_CLIENT;
  const p = createDvsaProvider(
    { url: fake.apiUrl, tokenUrl: fake.tokenUrl, clientId, clientSecret, scope, apiKey },
    deps,
  );
  providers.push(p);
  return p;
}

const mot = (p: DvsaProvider, reg: string) => p.fetch('UKMOT', reg, '', fetchContext());
const failureOf = async (promise: Promise<unknown>) =>
  (await promise.then(() => null).catch((e: unknown) => e)) as UpstreamFailure;

test('with REDIS_URL the quota is shared by every instance', async () => {
  const prefix = `test:dvsa:${process.pid}:${Date.now()}:`;
  const deps = {
    redisUrl: 'redis://127.0.0.1:6379',
    redisPrefix: prefix,
    // Six a day: each instance's token request and four calls between them.
    quota: { perSecond: 15, burst: 10, perDay: 6 },
  };
  const a = provider(deps);
  const b = provider(deps);
  for (const p of [a, b, a, b]) expect((await mot(p, 'AB12CDE')).found).toBe(true);
  const e = await failureOf(mot(b, 'AB12CDE'));
  expect([e.kind, e.retryAfterS! > 3600]).toEqual(['transient', true]);
  const e2 = await failureOf(mot(a, 'AB12CDE'));
  expect(e2.kind).toBe('transient');
});
