// A batch job's rows in the store (store/batches.ts): a large job is written without holding the event
// loop for the whole insert (lookups and charges go on between its writes), is all there once create()
// resolves, and does not exist for anyone before.

import { describeStores, open } from '../helpers/stores';
import type { VehicleStore } from '../../src/store/store';

const ROWS = 20_000;
const rows = Array.from({ length: ROWS }, (_, i) => ({ operation: 'Check', registration: `B${i}`, state: '' }));
const job = (id: string) => ({
  id,
  owner: 'f'.repeat(64),
  address: '127.0.0.1',
  createdAt: 1,
  runner: 'r',
  leaseUntil: 2,
});

describeStores('%s store: creating a batch job', (kind) => {
  let store: VehicleStore;
  beforeEach(() => {
    store = open(kind.url());
  });
  afterEach(async () => {
    await store.close();
    await kind.cleanup();
  });

  test('20,000 rows: the event loop turns while they are written; the job appears whole, in order', async () => {
    const order: string[] = [];
    const id = 'CreateTurns0123456789abc';
    const created = store.batches.create(job(id), rows).then(() => order.push('created'));
    // Work waiting for the event loop (a lookup's socket, a timer) runs before the job is all written, and finds
    // no job yet.
    const turn = new Promise((resolve) =>
      setImmediate(() => {
        order.push('turn');
        resolve(store.batches.get(id));
      }),
    );
    await created;
    const seenBefore = await turn;
    expect(order).toEqual(['turn', 'created']);
    expect(seenBefore).toBeNull();
    const got = await store.batches.get(id);
    expect(got).toMatchObject({ id, rows: ROWS, done: 0, status: 'running', address: '127.0.0.1' });
    const page = await store.batches.results(id, ROWS - 1, 5);
    expect(page.map((r) => [r.n, r.registration])).toEqual([
      [ROWS - 1, `B${ROWS - 2}`],
      [ROWS, `B${ROWS - 1}`],
    ]);
  });
});
