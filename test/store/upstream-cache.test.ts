// The upstream cache's storage (store/cache.ts), the same on SQLite and PostgreSQL: answers and
// not-founds kept with provider and fetch time, replaced per key, counted and purged by operation
// and registration, apart from the imported records (docs/upstream.md, The cache). (`reglookup cache
// stats|purge`, export and backup with and without --with-cache: test/cli/cache.test.ts.)

import { fill, T0 } from '../helpers/cached-answers';
import { describeStores, open } from '../helpers/stores';
import type { VehicleStore } from '../../src/store/store';

describeStores('%s store: the upstream cache', (kind) => {
  let url: string;
  let store: VehicleStore;
  beforeEach(async () => {
    url = kind.url();
    store = open(url);
    await fill(store);
  });
  afterEach(async () => {
    await store.close();
  });

  test('an answer, a not-found and a state key are read back with provider and fetch time; other keys are null', async () => {
    expect(await store.cacheGet({ operation: 'Check', registration: 'AA19AAA', state: '' })).toEqual({
      payload: '{"Description":"FETCHED"}',
      provider: 'dvla',
      fetchedAt: T0,
    });
    expect(await store.cacheGet({ operation: 'Check', registration: 'ER19NFD', state: '' })).toEqual({
      payload: null,
      provider: 'dvla',
      fetchedAt: T0 + 1000,
    });
    expect(await store.cacheGet({ operation: 'CheckUSA', registration: 'ABC123', state: 'CA' })).toEqual({
      payload: '{"Description":"US"}',
      provider: 'regcheck',
      fetchedAt: T0 + 3000,
    });
    expect(await store.cacheGet({ operation: 'CheckUSA', registration: 'ABC123', state: 'NY' })).toBeNull();
    expect(await store.cacheGet({ operation: 'CheckMotorBikeUK', registration: 'AA19AAA', state: '' })).toBeNull();
  });

  test('a second put for a key replaces the first', async () => {
    await store.cachePut({
      operation: 'Check',
      registration: 'AA19AAA',
      state: '',
      provider: 'regcheck',
      fetchedAt: T0 + 9000,
      payload: null,
    });
    expect(await store.cacheGet({ operation: 'Check', registration: 'AA19AAA', state: '' })).toEqual({
      payload: null,
      provider: 'regcheck',
      fetchedAt: T0 + 9000,
    });
  });

  test('cached answers are not records: get, count and export do not see them', async () => {
    expect(await store.get({ operation: 'Check', registration: 'AA19AAA', state: '' })).toBeNull();
    expect(await store.count()).toBe(0);
  });

  test('stats by operation and provider; purge by registration, by operation, then all', async () => {
    expect(await store.cacheStats()).toEqual([
      { operation: 'Check', provider: 'dvla', found: 1, notFound: 1, oldest: T0, newest: T0 + 1000 },
      { operation: 'CheckUSA', provider: 'regcheck', found: 1, notFound: 0, oldest: T0 + 3000, newest: T0 + 3000 },
      { operation: 'UKMOT', provider: 'dvsa', found: 1, notFound: 0, oldest: T0 + 2000, newest: T0 + 2000 },
    ]);
    expect(await store.cacheStats({ registration: 'AA19AAA' })).toHaveLength(2);
    expect(await store.cachePurge({ registration: 'AA19AAA', operation: 'UKMOT' })).toBe(1);
    expect(await store.cachePurge({ registration: 'AA19AAA' })).toBe(1);
    expect(await store.cachePurge({ operation: 'Check' })).toBe(1);
    expect(await store.cachePurge()).toBe(1);
    expect(await store.cacheStats()).toEqual([]);
  });
});
