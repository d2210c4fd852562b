// CACHE_TTL_MS on PostgreSQL: a record changed by anyone is served in its old form for at most
// CACHE_TTL_MS (docs/scaling.md); this process's own imports are seen at once.

import { PostgresStore } from '../../src/store/postgres';
import { describePostgres, sqlIn, testSchema } from '../helpers/postgres';

describePostgres('PostgreSQL lookup cache', () => {
  const s = testSchema();
  let store: PostgresStore;
  const key = { operation: 'Check', registration: 'C1', state: '' };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    store = new PostgresStore(s.url, { cacheTtlMs: 300 });
    const batch = await store.beginImport();
    await batch.put({ ...key, payload: '{"v":1}' });
    await batch.commit();
  });
  afterAll(async () => {
    await store.close();
    await s.drop();
  });

  test('a change made by another instance is served once CACHE_TTL_MS has passed', async () => {
    expect((await store.get(key))?.payload).toBe('{"v":1}');
    await sqlIn(s.schema, `UPDATE records SET payload = '{"v":2}' WHERE registration = 'C1'`);
    await sleep(400);
    expect((await store.get(key))?.payload).toBe('{"v":2}');
  });

  test('a record added by another instance, after a lookup found nothing, is found once CACHE_TTL_MS has passed', async () => {
    const other = { operation: 'Check', registration: 'C2', state: '' };
    expect(await store.get(other)).toBeNull();
    await sqlIn(
      s.schema,
      `INSERT INTO records (operation, registration, state, payload) VALUES ('Check', 'C2', '', '{"v":3}')`,
    );
    await sleep(400);
    expect((await store.get(other))?.payload).toBe('{"v":3}');
  });

  test('within CACHE_TTL_MS, repeated lookups are answered from memory: changes made elsewhere to several records are not seen yet', async () => {
    const long = new PostgresStore(s.url, { cacheTtlMs: 60_000 });
    try {
      const keys = ['M1', 'M2', 'M3'].map((registration) => ({ operation: 'Check', registration, state: '' }));
      const batch = await long.beginImport();
      for (const k of keys) await batch.put({ ...k, payload: '{"v":"old"}' });
      await batch.commit();
      for (const k of keys) expect((await long.get(k))?.payload).toBe('{"v":"old"}');
      await sqlIn(s.schema, `UPDATE records SET payload = '{"v":"new"}' WHERE registration IN ('M1', 'M2', 'M3')`);
      for (const k of keys) expect((await long.get(k))?.payload).toBe('{"v":"old"}');
      // Another store object (another instance) with no cache sees the change at once.
      expect((await store.get(keys[0]))?.payload).toBe('{"v":"new"}');
    } finally {
      await long.close();
    }
  });

  test('the cache holds at most 50,000 lookups (README): the one after that starts it again, so a change made elsewhere is then seen', async () => {
    const big = new PostgresStore(s.url, { cacheTtlMs: 600_000 });
    try {
      const watched = { operation: 'Check', registration: 'W1', state: '' };
      await sqlIn(
        s.schema,
        `INSERT INTO records (operation, registration, state, payload) VALUES ('Check', 'W1', '', '{"v":"old"}')`,
      );
      expect((await big.get(watched))?.payload).toBe('{"v":"old"}');
      await sqlIn(s.schema, `UPDATE records SET payload = '{"v":"new"}' WHERE registration = 'W1'`);
      // 49,999 more lookups (of keys that are not there): 50,000 kept, the watched one among them.
      const missing = (i: number) => ({ operation: 'CheckUSA', registration: `NONE${i}`, state: 'CA' });
      expect(
        (await Promise.all(Array.from({ length: 49_999 }, (_, i) => big.get(missing(i))))).every((f) => f === null),
      ).toBe(true);
      expect((await big.get(watched))?.payload).toBe('{"v":"old"}');
      // The next new lookup starts the cache again: the watched record is read afresh.
      expect(await big.get(missing(49_999))).toBeNull();
      expect((await big.get(watched))?.payload).toBe('{"v":"new"}');
    } finally {
      await big.close();
    }
  });

  test("this process's own import is served at once", async () => {
    expect((await store.get(key))?.payload).toBe('{"v":2}');
    const batch = await store.beginImport();
    await batch.put({ ...key, payload: '{"v":4}' });
    await batch.commit();
    expect((await store.get(key))?.payload).toBe('{"v":4}');
  });
});
