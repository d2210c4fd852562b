// Credit shards on PostgreSQL (src/store/postgres-shards.ts): an instance charges a busy account on a
// row of its own, leased from the account's row, so instances do not take turns on one row. What
// must hold whatever the shards do: N credits give exactly N granted lookups across all instances;
// every reader of a balance sees row plus shards; every writer of a balance (top-up, set, keyed
// top-up, import) acts on the whole balance; a killed instance's shard is drained by the others; a
// closed one gives its shard back; daily limits stay exact. Stores stand in for instances; every
// expected number is written by hand here.

import pg from 'pg';
import { describePostgres, PG_BASE_URL, sqlIn, testSchema, type TestSchema } from '../helpers/postgres';
import { PostgresStore } from '../../src/store/postgres';
import { PostgresAccounts, type PgRunner } from '../../src/store/postgres-accounts';
import type { RecordKey } from '../../src/store/store';

const DAY = '2026-04-01';
const FOCUS = '{"Description":"FORD FOCUS"}';
const key = (registration: string): RecordKey => ({ operation: 'Check', registration, state: '' });

/** `n` charges for `username`, dealt round the stores in turns of `perTurn` at once: how many were granted. */
async function chargeMany(
  stores: readonly PostgresStore[],
  username: string,
  n: number,
  perTurn = 40,
  day = DAY,
): Promise<number> {
  let granted = 0;
  for (let done = 0; done < n; done += perTurn) {
    const turn = Array.from({ length: Math.min(perTurn, n - done) }, (_, i) => {
      const s = stores[(done + i) % stores.length];
      return i % 2
        ? s.accounts.charge(username, day, 'Check').then((r) => r.ok)
        : s.chargeFound!(key('RG11ABC'), username, day, 'Check').then((r) => r.charge?.ok === true);
    });
    granted += (await Promise.all(turn)).filter(Boolean).length;
  }
  return granted;
}

describePostgres('credit shards: a busy account charged by several instances without one shared row', () => {
  let schema: TestSchema;
  let stores: PostgresStore[];

  beforeEach(async () => {
    schema = testSchema();
    stores = Array.from({ length: 3 }, () => new PostgresStore(schema.url));
    await stores[0].migrate();
    const batch = await stores[0].beginImport();
    await batch.put({ ...key('RG11ABC'), payload: FOCUS });
    await batch.commit();
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await schema.drop();
  });

  const shardCredits = async (username: string): Promise<number> =>
    Number(
      (
        await sqlIn<{ n: string }>(
          schema.schema,
          'SELECT COALESCE(SUM(credits), 0) AS n FROM credit_shards WHERE username = $1',
          [username],
        )
      )[0].n,
    );

  test('a busy account is leased to the instances; the balance every reader sees is row plus shards, and usage counts each lookup once', async () => {
    await stores[0].accounts.addAccount({ username: 'busy', credits: 10_000 });
    expect(await chargeMany(stores, 'busy', 1200)).toBe(1200);
    // The shards hold part of the balance now (the point of them)...
    expect(await shardCredits('busy')).toBeGreaterThan(0);
    // ...and every reader counts them.
    expect((await stores[1].accounts.getAccount('busy'))?.credits).toBe(8800);
    const listed = (await stores[2].accounts.listAccounts(DAY)).find((a) => a.username === 'busy');
    expect(listed).toMatchObject({ credits: 8800, usedToday: 1200 });
    expect(await stores[0].admin.listPage(DAY, { after: '', search: 'busy', limit: 10 })).toMatchObject({
      accounts: [{ username: 'busy', credits: 8800, usedToday: 1200 }],
    });
    expect(await stores[0].accounts.usage('busy', DAY)).toEqual([
      { username: 'busy', day: DAY, operation: 'Check', found: 1200, notFound: 0 },
    ]);
    expect(await stores[0].admin.usageRange(DAY, DAY)).toEqual([
      { username: 'busy', name: 'caller-busy', day: DAY, operation: 'Check', found: 1200, notFound: 0 },
    ]);
    expect(await stores[0].admin.countLowCredit(8801)).toBe(1);
    expect(await stores[0].admin.countLowCredit(8800)).toBe(0);
  });

  test('3,000 credits, 6,000 lookups from three instances: exactly 3,000 granted, the balance 0, nothing left in any shard', async () => {
    await stores[0].accounts.addAccount({ username: 'dry', credits: 3000 });
    expect(await chargeMany(stores, 'dry', 6000, 120)).toBe(3000);
    expect((await stores[0].accounts.getAccount('dry'))?.credits).toBe(0);
    expect(await shardCredits('dry')).toBe(0);
    expect(await stores[1].accounts.usage('dry', DAY)).toEqual([
      { username: 'dry', day: DAY, operation: 'Check', found: 3000, notFound: 0 },
    ]);
  });

  test('an instance that dies holding a shard strands nothing: the others drain it, and exactly the balance is granted', async () => {
    await stores[0].accounts.addAccount({ username: 'orphan', credits: 1000 });
    // One instance alone leases and charges; then it is gone without closing (as after SIGKILL).
    const doomed = new PostgresStore(schema.url);
    expect(await chargeMany([doomed], 'orphan', 200)).toBe(200);
    const stranded = await shardCredits('orphan');
    expect(stranded).toBeGreaterThan(0);
    await (doomed as unknown as { pool: { end(): Promise<void> } }).pool.end();
    expect((await stores[0].accounts.getAccount('orphan'))?.credits).toBe(800);
    expect(await chargeMany(stores.slice(0, 2), 'orphan', 1000)).toBe(800);
    expect((await stores[0].accounts.getAccount('orphan'))?.credits).toBe(0);
  });

  test('a charge on a shard reports the lookups the account made that day, not its place in the batch', async () => {
    const [a] = stores;
    await a.accounts.addAccount({ username: 'counted', credits: 1000 });
    // One at a time: the first on the row (which leases a shard), the others on the shard.
    const used: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await a.accounts.charge('counted', DAY, 'Check');
      used.push(r.ok ? r.usedToday : -1);
    }
    expect(await shardCredits('counted')).toBeGreaterThan(0);
    expect(used).toEqual([1, 2, 3, 4]);
    // A batch of three on the shard: the 5th, 6th and 7th of the day.
    const batch = await Promise.all([1, 2, 3].map(() => a.accounts.charge('counted', DAY, 'Check')));
    expect(batch.map((r) => (r.ok ? r.usedToday : -1))).toEqual([5, 6, 7]);
    expect((await a.accounts.listAccounts(DAY)).find((x) => x.username === 'counted')?.usedToday).toBe(7);
  });

  test('a closed instance gives its shard back to the row', async () => {
    await stores[0].accounts.addAccount({ username: 'back', credits: 1000 });
    const leaving = new PostgresStore(schema.url);
    expect(await chargeMany([leaving], 'back', 200)).toBe(200);
    expect(await shardCredits('back')).toBeGreaterThan(0);
    await leaving.close();
    expect(await shardCredits('back')).toBe(0);
    expect(await sqlIn(schema.schema, "SELECT credits::int AS c FROM accounts WHERE username = 'back'")).toEqual([
      { c: 800 },
    ]);
  });

  test('writers of a balance act on the whole of it: a top-up, a debit below zero, a keyed top-up, a set balance, an import', async () => {
    await stores[0].accounts.addAccount({ username: 'paid', credits: 1000 });
    expect(await chargeMany(stores, 'paid', 300)).toBe(300);
    expect(await shardCredits('paid')).toBeGreaterThan(0);
    expect(await stores[1].accounts.addCredits('paid', 50)).toEqual({ balance: 750 });
    expect(await chargeMany(stores, 'paid', 100)).toBe(100);
    expect(await stores[1].accounts.addCredits('paid', -600)).toEqual({ balance: 50 });
    expect(await chargeMany(stores, 'paid', 100)).toBe(50);

    await stores[0].accounts.addCredits('paid', 1000);
    expect(await chargeMany(stores, 'paid', 200)).toBe(200);
    const once = await stores[2].admin.creditOnce({
      key: 'k-1',
      fingerprint: 'f',
      username: 'paid',
      delta: 10,
      actor: 'test',
      at: '2026-04-01T00:00:00Z',
    });
    expect(once).toEqual({ result: { balance: 810 }, replayed: false });

    expect(await chargeMany(stores, 'paid', 200)).toBe(200);
    expect(await stores[0].accounts.updateAccount('paid', { credits: 100 }, DAY)).toMatchObject({ credits: 100 });
    expect(await shardCredits('paid')).toBe(0);
    expect(await chargeMany(stores, 'paid', 200)).toBe(100);

    await stores[0].accounts.addCredits('paid', 2000);
    expect(await chargeMany(stores, 'paid', 200)).toBe(200);
    await stores[1].accounts.putAccount({ username: 'paid', credits: 30 });
    expect((await stores[2].accounts.getAccount('paid'))?.credits).toBe(30);
    expect(await chargeMany(stores, 'paid', 100)).toBe(30);
  });

  test('a daily limit stays on the row and exact: 1,000 credits and a limit of 300 give 300 lookups, nothing leased', async () => {
    await stores[0].accounts.addAccount({ username: 'daily', credits: 1000, dailyLimit: 300 });
    expect(await chargeMany(stores, 'daily', 600)).toBe(300);
    expect(await shardCredits('daily')).toBe(0);
    expect((await stores[0].accounts.getAccount('daily'))?.credits).toBe(700);
  });

  test('a limit set on a sharded account folds its shards back and counts the day so far', async () => {
    await stores[0].accounts.addAccount({ username: 'later', credits: 5000 });
    expect(await chargeMany(stores, 'later', 400)).toBe(400);
    expect(await stores[0].accounts.updateAccount('later', { dailyLimit: 500 }, DAY)).toMatchObject({
      credits: 4600,
      dailyLimit: 500,
    });
    expect(await shardCredits('later')).toBe(0);
    expect(await chargeMany(stores, 'later', 300)).toBe(100);
    expect((await stores[0].accounts.getAccount('later'))?.credits).toBe(4500);
  });

  test('disabling an account stops its shards at once; removing it removes them', async () => {
    await stores[0].accounts.addAccount({ username: 'gone', credits: 5000 });
    expect(await chargeMany(stores, 'gone', 300)).toBe(300);
    expect(await stores[0].accounts.setEnabled('gone', false)).toBe(true);
    expect(await chargeMany(stores, 'gone', 90)).toBe(0);
    expect(await stores[0].accounts.removeAccount('gone')).toBe(true);
    expect(await shardCredits('gone')).toBe(0);
    expect(await sqlIn(schema.schema, "SELECT count(*)::int AS n FROM usage_shards WHERE username = 'gone'")).toEqual([
      { n: 0 },
    ]);
  });

  test('a limit given by an import (putAccount) on a sharded account folds the shards back and counts the day so far', async () => {
    // An import is not given the day: it counts today's (UTC), so the lookups are made today here.
    const today = new Date().toISOString().slice(0, 10);
    await stores[0].accounts.addAccount({ username: 'imported', credits: 5000 });
    expect(await chargeMany(stores, 'imported', 400, 40, today)).toBe(400);
    await stores[1].accounts.putAccount({ username: 'imported', dailyLimit: 500 });
    expect(await shardCredits('imported')).toBe(0);
    expect(await chargeMany(stores, 'imported', 300, 40, today)).toBe(100);
    expect((await stores[0].accounts.getAccount('imported'))?.credits).toBe(4500);
  });

  test('a new account leases nothing, even where a shard of an earlier account of that name was left behind', async () => {
    await sqlIn(schema.schema, "INSERT INTO credit_shards (username, shard, credits) VALUES ('reborn', 7, 500)");
    expect(await stores[0].accounts.addAccount({ username: 'reborn', credits: 5 })).toBe(true);
    expect((await stores[1].accounts.getAccount('reborn'))?.credits).toBe(5);
    expect(await chargeMany(stores, 'reborn', 20)).toBe(5);
  });

  test("when the row's statement fails, a batch the shard covers is answered and one it cannot is refused whole: every credit taken has its answer", async () => {
    await stores[0].accounts.addAccount({ username: 'split', credits: 1000 });
    // An instance whose row statements fail once armed (as on a time-out), on a pool of its own.
    const pool = new pg.Pool({ connectionString: PG_BASE_URL, options: `-c search_path=${schema.schema}`, max: 4 });
    let failRow = false;
    const runner: PgRunner = {
      query: async (name, text, values) => {
        if (failRow && name === 'account-charge-batch') throw new Error('row statement failed');
        return pool.query({ name, text, values });
      },
      transaction: async (fn) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const out = await fn(client);
          await client.query('COMMIT');
          return out;
        } catch (e) {
          await client.query('ROLLBACK');
          throw e;
        } finally {
          client.release();
        }
      },
    };
    const flaky = new PostgresAccounts(runner);
    try {
      let granted = 0;
      for (let i = 0; i < 5; i++)
        granted += (await Promise.all(Array.from({ length: 40 }, () => flaky.charge('split', DAY, 'Check')))).filter(
          (r) => r.ok,
        ).length;
      expect(granted).toBe(200);
      const leased = await shardCredits('split');
      expect(leased).toBeGreaterThan(0);
      expect(leased).toBeLessThan(300);
      failRow = true;
      // Five lookups the shard covers, then 300 it cannot: the row's statement takes those and fails.
      const small = await Promise.allSettled(Array.from({ length: 5 }, () => flaky.charge('split', DAY, 'Check')));
      expect(leased).toBeGreaterThanOrEqual(5);
      expect(small.filter((r) => r.status === 'fulfilled' && r.value.ok)).toHaveLength(5);
      const big = await Promise.allSettled(Array.from({ length: 300 }, () => flaky.charge('split', DAY, 'Check')));
      expect(big.filter((r) => r.status === 'rejected')).toHaveLength(300);
      // Credits taken and usage counted: exactly the answers given, with the shard holding the rest of its lease.
      expect((await stores[0].accounts.getAccount('split'))?.credits).toBe(1000 - 200 - 5);
      expect(await shardCredits('split')).toBe(leased - 5);
      expect(await stores[0].accounts.usage('split', DAY)).toEqual([
        { username: 'split', day: DAY, operation: 'Check', found: 205, notFound: 0 },
      ]);
    } finally {
      await pool.end();
    }
  });
});
