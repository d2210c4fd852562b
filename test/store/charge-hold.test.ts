// The charges of a busy account on PostgreSQL go to the database in batches, one statement (and one
// commit) each (src/store/postgres-accounts.ts). When fewer charges are waiting than the account's
// last batch held, they wait a moment for the rest: under a steady load, the lookups that batch
// answered come back for the next one, and without the wait the load splits into two batches, each
// paying a commit. They wait at most once, so a smaller load is still answered, and a batch as large
// as the last one goes at once. The sizes of the statements' batches are counted at the database
// runner; every expected size is written by hand here.

import pg from 'pg';
import { describePostgres, PG_BASE_URL, testSchema, type TestSchema } from '../helpers/postgres';
import { PostgresStore } from '../../src/store/postgres';
import { PostgresAccounts, type PgRunner } from '../../src/store/postgres-accounts';

const DAY = '2026-05-01';

/** The next check phase: charges asked there come a turn after those asked now. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describePostgres('a batch of charges waits for as many as the last one held', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let accounts: PostgresAccounts;
  /** The number of charges in each of the row's charge statements, in order. */
  let sizes: number[];

  beforeEach(async () => {
    schema = testSchema();
    const store = new PostgresStore(schema.url);
    await store.migrate();
    // 50 credits: under the credit shards' threshold, so every batch is charged on the account's row.
    await store.accounts.addAccount({ username: 'steady', credits: 50 });
    await store.close();
    pool = new pg.Pool({ connectionString: PG_BASE_URL, options: `-c search_path=${schema.schema}`, max: 4 });
    sizes = [];
    const runner: PgRunner = {
      query: async (name, text, values) => {
        if (name === 'account-charge-batch') sizes.push(Number(values[2]));
        return pool.query({ name, text, values });
      },
      transaction: () => Promise.reject(new Error('not used here')),
    };
    accounts = new PostgresAccounts(runner);
  });
  afterEach(async () => {
    await pool.end();
    await schema.drop();
  });

  const charges = (n: number) => Array.from({ length: n }, () => accounts.charge('steady', DAY, 'Check'));

  test('after a batch of 10, three charges and then seven a turn later go in one statement of 10', async () => {
    await Promise.all(charges(10));
    const first = charges(3);
    await nextTurn();
    const rest = charges(7);
    const results = await Promise.all([...first, ...rest]);
    expect(sizes).toEqual([10, 10]);
    // Granted in the order asked, across the two turns: 40 credits left after the first 10.
    expect(results.map((r) => (r.ok ? r.credits : r.reason))).toEqual([39, 38, 37, 36, 35, 34, 33, 32, 31, 30]);
  });

  test('fewer than the last batch, with none coming after them: they wait once and go alone', async () => {
    await Promise.all(charges(10));
    const results = await Promise.all(charges(3));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(sizes).toEqual([10, 3]);
    // The next batch waits for three, not ten: four in a turn go at once, and two after them wait for the next two.
    await Promise.all(charges(4));
    const two = charges(2);
    await nextTurn();
    await Promise.all([...two, ...charges(2)]);
    expect(sizes).toEqual([10, 3, 4, 4]);
  });

  test('one charge at a time: each is its own statement, as before', async () => {
    for (let i = 0; i < 5; i++) expect((await accounts.charge('steady', DAY, 'Check')).ok).toBe(true);
    expect(sizes).toEqual([1, 1, 1, 1, 1]);
  });

  test('the credits stay exact when held batches run out: 50 credits, 60 charges in turns of 7 and 3', async () => {
    let granted = 0;
    for (let i = 0; i < 6; i++) {
      const seven = charges(7);
      await nextTurn();
      const three = charges(3);
      granted += (await Promise.all([...seven, ...three])).filter((r) => r.ok).length;
    }
    expect(granted).toBe(50);
    const store = new PostgresStore(schema.url);
    try {
      expect((await store.accounts.getAccount('steady'))?.credits).toBe(0);
      expect(await store.accounts.usage('steady', DAY)).toEqual([
        { username: 'steady', day: DAY, operation: 'Check', found: 50, notFound: 0 },
      ]);
    } finally {
      await store.close();
    }
  });
});
