// Nobody is charged for an answer that is not sent (issue 43, 2; store.ts ChargeCaller): a charge
// whose caller has left before it commits is not kept, on either store, and neither is its usage; on
// PostgreSQL, a charge the server reaches after its call's deadline (DATABASE_QUERY_TIMEOUT_MS) grants
// nothing, so that a caller answered SERVICE_UNAVAILABLE is never charged when the server catches up.
// Every expected balance and count is written by hand here.

import pg from 'pg';
import { describeStores, open } from '../helpers/stores';
import { describePostgres, PG_BASE_URL, testSchema, type TestSchema } from '../helpers/postgres';
import { PostgresStore } from '../../src/store/postgres';
import { StoreUnavailableError, type ChargeCaller, type VehicleStore } from '../../src/store/store';

const DAY = '2026-04-01';

/** A caller there when first asked, gone from the `after`-th question on. */
function leaving(after: number): ChargeCaller {
  let asked = 0;
  return {
    get destroyed() {
      asked++;
      return asked >= after;
    },
  };
}

describeStores('%s store: a caller that left', (kind) => {
  let store: VehicleStore;

  beforeEach(async () => {
    store = open(kind.url());
    await store.accounts.addAccount({ username: 'payer', credits: 100 });
  });
  afterEach(async () => {
    await store.close();
    await kind.cleanup();
  });

  test('before its charge: not charged, no usage, refused as unavailable; a caller still there is charged', async () => {
    const gone: ChargeCaller = { destroyed: true };
    const there: ChargeCaller = { destroyed: false };
    const [a, b] = await Promise.allSettled([
      store.accounts.charge('payer', DAY, 'Check', gone),
      store.accounts.charge('payer', DAY, 'Check', there),
    ]);
    expect(a.status).toBe('rejected');
    expect((a as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(b).toMatchObject({ status: 'fulfilled', value: { ok: true } });
    expect((await store.accounts.getAccount('payer'))?.credits).toBe(99);
    expect(await store.accounts.usage('payer', DAY)).toEqual([
      { username: 'payer', day: DAY, operation: 'Check', found: 1, notFound: 0 },
    ]);
  });
});

describePostgres('PostgreSQL: a charge not answered in time is not kept', () => {
  let schema: TestSchema;
  let store: PostgresStore;

  beforeEach(async () => {
    schema = testSchema();
    store = new PostgresStore(schema.url, { queryTimeoutMs: 400 });
    await store.migrate();
    // 10 credits: under the credit shards' threshold, charged on the account's row; 1000: on a shard.
    await store.accounts.addAccount({ username: 'row', credits: 10, dailyLimit: 50 });
    await store.accounts.addAccount({ username: 'big', credits: 1000 });
  });
  afterEach(async () => {
    await store.close();
    await schema.drop();
  });

  test('the caller leaves while its charge is in flight: given back, with its day count and usage', async () => {
    for (const username of ['row', 'big']) {
      // Warm up the account (the first batch of a big one leases it a shard).
      await store.accounts.charge(username, DAY, 'Check', { destroyed: false });
      await store.accounts.charge(username, DAY, 'Check', { destroyed: false });
      // Asked once before the statement (there) and once after it (gone).
      await expect(store.accounts.charge(username, DAY, 'Check', leaving(2))).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
    }
    expect((await store.accounts.getAccount('row'))?.credits).toBe(8);
    expect((await store.accounts.getAccount('big'))?.credits).toBe(998);
    const list = await store.accounts.listAccounts(DAY);
    expect(list.find((a) => a.username === 'row')?.usedToday).toBe(2);
    for (const username of ['row', 'big'])
      expect(await store.accounts.usage(username, DAY)).toEqual([
        { username, day: DAY, operation: 'Check', found: 2, notFound: 0 },
      ]);
  });

  test('the server reaches the charge after its deadline (the row held by another writer): nothing taken', async () => {
    const locker = new pg.Client({ connectionString: PG_BASE_URL, options: `-c search_path=${schema.schema}` });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM accounts WHERE username = 'row' FOR UPDATE");
      const t0 = Date.now();
      await expect(store.accounts.charge('row', DAY, 'Check', { destroyed: false })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      expect(Date.now() - t0).toBeLessThan(1000);
      // The statement is still waiting on the server for the lock; released now, it runs, late.
      await new Promise((r) => setTimeout(r, 200));
      await locker.query('COMMIT');
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await locker.end();
    }
    expect((await store.accounts.getAccount('row'))?.credits).toBe(10);
    expect(await store.accounts.usage('row', DAY)).toEqual([]);
    expect((await store.accounts.listAccounts(DAY)).find((a) => a.username === 'row')?.usedToday).toBe(0);
  });
});
