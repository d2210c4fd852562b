// Answers fetched from upstreams, as the upstream cache keeps them (docs/upstream.md, The cache), put
// in a store for a test to read back, purge, export or back up.

import type { VehicleStore } from '../../src/store/store';

/** When the first of them was fetched. */
export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

/** Four cached answers: a found and a not-found from DVLA, an MOT history from DVSA, a state key from RegCheck. */
export async function fill(store: VehicleStore): Promise<void> {
  await store.cachePut({
    operation: 'Check',
    registration: 'AA19AAA',
    state: '',
    provider: 'dvla',
    fetchedAt: T0,
    payload: '{"Description":"FETCHED"}',
  });
  await store.cachePut({
    operation: 'Check',
    registration: 'ER19NFD',
    state: '',
    provider: 'dvla',
    fetchedAt: T0 + 1000,
    payload: null,
  });
  await store.cachePut({
    operation: 'UKMOT',
    registration: 'AA19AAA',
    state: '',
    provider: 'dvsa',
    fetchedAt: T0 + 2000,
    payload: '{"tests":[]}',
  });
  await store.cachePut({
    operation: 'CheckUSA',
    registration: 'ABC123',
    state: 'CA',
    provider: 'regcheck',
    fetchedAt: T0 + 3000,
    payload: '{"Description":"US"}',
  });
}
