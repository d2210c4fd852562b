// The PostgreSQL store's own surroundings, beyond the behaviour both stores share (store.test.ts):
// the connections it opens (DATABASE_POOL, application name, DATABASE_STATEMENT_TIMEOUT_MS, the
// URL's parameters), first use of a new schema by any call, and what it does when something fails
// (a migration step, a record the database refuses, a statement timeout half-way, a closed store).

import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres';
import type { Migration } from '../../src/store/migrations/runner';
import { describePostgres, PG_BASE_URL, sqlIn, testSchema, type TestSchema } from '../helpers/postgres';

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client of its own, as another user of the database would have. */
async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client(url);
  await c.connect();
  return c;
}

describePostgres('PostgreSQL store: first use, failures, closing', () => {
  const schemas: TestSchema[] = [];
  const stores: PostgresStore[] = [];
  const fresh = (statementTimeoutMs = 5000) => {
    const s = testSchema();
    schemas.push(s);
    const store = new PostgresStore(s.url, { pool: 4, statementTimeoutMs });
    stores.push(store);
    return { s, store };
  };
  afterAll(async () => {
    for (const st of stores) await st.close();
    for (const s of schemas) await s.drop();
  });

  test('on a new schema, whatever is asked first finds the tables there: an account removal, an export, an import, a lookup', async () => {
    const a = fresh();
    expect(await a.store.accounts.removeAccount('nobody')).toBe(false);
    const b = fresh();
    const seen: unknown[] = [];
    for await (const r of b.store.records()) seen.push(r);
    expect(seen).toEqual([]);
    const c = fresh();
    const batch = await c.store.beginImport();
    await batch.put({ operation: 'Check', registration: 'F1', state: '', payload: '{}' }, true);
    await batch.commit();
    expect(await c.store.count()).toBe(1);
    const d = fresh();
    expect(await d.store.get({ operation: 'Check', registration: 'F1', state: '' })).toBeNull();
    for (const { s } of [a, b, c, d]) {
      expect(await sqlIn(s.schema, 'SELECT max(version) AS v FROM schema_version')).toEqual([{ v: 9 }]);
    }
  });

  test('a migration step that fails names itself and the reason; the steps before it stay, and the store goes on', async () => {
    const { s, store } = fresh();
    const one: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE one (x INTEGER)' };
    const two: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE two (x INTEGER); SELECT 1 / 0' };
    await expect(store.migrate(Infinity, [one, two])).rejects.toThrow('migration 2 (two) failed: division by zero');
    expect(await sqlIn(s.schema, 'SELECT version, name FROM schema_version ORDER BY version')).toEqual([
      { version: 1, name: 'one' },
    ]);
    expect(
      await sqlIn(
        s.schema,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('one', 'two')",
        [s.schema],
      ),
    ).toEqual([{ table_name: 'one' }]);
    const fixed: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE two (x INTEGER)' };
    expect(await store.migrate(Infinity, [one, fixed])).toEqual({ applied: [fixed], version: 2 });
  });

  test('a step and its schema_version row are one transaction: when the row cannot be written, the step is undone', async () => {
    const { s, store } = fresh();
    // The step writes its own version's row, so that recording it afterwards fails (duplicate key).
    const step: Migration = {
      version: 1,
      name: 'clash',
      sql: "CREATE TABLE clash (x INTEGER); INSERT INTO schema_version (version, name) VALUES (1, 'early')",
    };
    await expect(store.migrate(Infinity, [step])).rejects.toThrow(/^migration 1 \(clash\) failed: duplicate key value/);
    expect(await sqlIn(s.schema, 'SELECT version FROM schema_version')).toEqual([]);
    expect(
      await sqlIn(
        s.schema,
        "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'clash'",
        [s.schema],
      ),
    ).toEqual([]);
  });

  test('migrations are not held to DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const { s, store } = fresh(50);
    const slow: Migration = { version: 1, name: 'slow', sql: 'SELECT pg_sleep(0.3)' };
    expect(await store.migrate(Infinity, [slow])).toEqual({ applied: [slow], version: 1 });
    expect(await sqlIn(s.schema, 'SELECT version FROM schema_version')).toEqual([{ version: 1 }]);
  });

  test('an account removal stopped half-way by the statement timeout leaves the account and its usage as they were', async () => {
    const { s, store } = fresh(300);
    await store.accounts.putAccount({ username: 'held', credits: 5 });
    await store.accounts.addUsage([{ username: 'held', day: '2026-11-01', operation: 'Check', found: 2, notFound: 1 }]);
    // Another session holds the account's row: the removal's second statement waits for it.
    const other = await connect(
      `${PG_BASE_URL}${PG_BASE_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${s.schema}`,
    );
    try {
      await other.query('BEGIN');
      await other.query("SELECT 1 FROM accounts WHERE username = 'held' FOR UPDATE");
      // Let go after 2 s in any case, so that a removal that waits instead of failing ends the test.
      const release = setTimeout(() => void other.query('COMMIT').catch(() => undefined), 2000);
      try {
        await expect(store.accounts.removeAccount('held')).rejects.toThrow(/statement timeout/);
      } finally {
        clearTimeout(release);
      }
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    expect(await store.accounts.usage('held', '2026-01-01')).toEqual([
      { username: 'held', day: '2026-11-01', operation: 'Check', found: 2, notFound: 1 },
    ]);
    expect((await store.accounts.getAccount('held'))?.credits).toBe(5);
    expect(await store.accounts.removeAccount('held')).toBe(true);
    expect(await store.accounts.usage('held', '2026-01-01')).toEqual([]);
  });

  test('a record the database cannot hold (a NUL character) fails the import with its reason; nothing is kept and the store goes on', async () => {
    const { store } = fresh();
    // Into an empty store (records copied straight into the table) ...
    const direct = await store.beginImport();
    await direct.put({ operation: 'Check', registration: 'OK1', state: '', payload: '{}' }, true);
    await direct.put({ operation: 'Check', registration: 'NUL1', state: '', payload: 'a\u0000b' }, true);
    await expect(direct.commit()).rejects.toThrow(/0x00/);
    expect(await store.isEmpty()).toBe(true);
    // A repeat after the bad record, which moves the batch to its staging table, reports the same reason.
    const repeat = await store.beginImport();
    await repeat.put({ operation: 'Check', registration: 'NUL1', state: '', payload: 'a\u0000b' }, true);
    await expect(repeat.put({ operation: 'Check', registration: 'NUL1', state: '', payload: '{}' })).rejects.toThrow(
      /0x00/,
    );
    await repeat.rollback();
    expect(await store.isEmpty()).toBe(true);
    // ... and into one that holds records (copied into a staging table), with enough after the bad
    // record for the failure to arrive while the batch is still being written.
    const first = await store.beginImport();
    await first.put({ operation: 'Check', registration: 'KEEP1', state: '', payload: '{"v":1}' }, true);
    await first.commit();
    const staged = await store.beginImport();
    const failed = (async () => {
      await staged.put({ operation: 'Check', registration: 'NUL2', state: '', payload: 'a\u0000b' });
      for (let i = 0; i < 2000; i++)
        await staged.put({
          operation: 'Check',
          registration: `S${i}`,
          state: '',
          payload: `{"pad":"${'x'.repeat(200)}"}`,
        });
      await staged.commit();
    })();
    await expect(failed).rejects.toThrow(/0x00/);
    await staged.rollback();
    expect(await store.count()).toBe(1);
    const after = await store.beginImport();
    await after.put({ operation: 'Check', registration: 'KEEP1', state: '', payload: '{"v":2}' });
    await after.commit();
    expect(await store.get({ operation: 'Check', registration: 'KEEP1', state: '' })).toEqual({ payload: '{"v":2}' });
  });

  test('once the failure of a bad record has arrived, the next put reports it, rather than the commit only', async () => {
    const { store } = fresh();
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'NUL3', state: '', payload: 'a\u0000b' }, true);
    // Enough text to be sent to the server at once (the store gathers 64 KiB before it writes).
    await batch.put(
      { operation: 'Check', registration: 'BIG1', state: '', payload: `{"pad":"${'x'.repeat(70_000)}"}` },
      true,
    );
    let failure: unknown = null;
    for (let i = 0; failure === null && i < 250; i++) {
      await sleep(20);
      await batch
        .put({ operation: 'Check', registration: `AFTER${i}`, state: '', payload: '{}' }, true)
        .catch((e: unknown) => {
          failure = e;
        });
    }
    expect(String(failure)).toMatch(/0x00/);
    await batch.rollback();
    expect(await store.isEmpty()).toBe(true);
  });

  test('an import that cannot begin (the records table is missing) fails with the reason, and the next one, once it is back, goes through', async () => {
    const { s, store } = fresh();
    expect(await store.isEmpty()).toBe(true);
    await sqlIn(s.schema, 'ALTER TABLE records RENAME TO records_away');
    await expect(store.beginImport()).rejects.toThrow('relation "records" does not exist');
    await expect(store.beginImport()).rejects.toThrow('relation "records" does not exist');
    await sqlIn(s.schema, 'ALTER TABLE records_away RENAME TO records');
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'B1', state: '', payload: '{}' });
    await batch.commit();
    expect(await store.count()).toBe(1);
  });

  test('a server that cannot be reached: each import fails with the reason, not with "already running"', async () => {
    const store = new PostgresStore('postgres://reglookup@127.0.0.1:1/reglookup', { pool: 1 });
    try {
      await expect(store.beginImport()).rejects.toThrow('ECONNREFUSED');
      await expect(store.beginImport()).rejects.toThrow('ECONNREFUSED');
    } finally {
      await store.close();
    }
  });

  test('a closed store refuses further calls; closing it again is harmless', async () => {
    const { store } = fresh();
    expect(await store.isEmpty()).toBe(true);
    await store.close();
    await expect(store.count()).rejects.toThrow(/after calling end on the pool/);
    await store.close();
  });
});

describePostgres('PostgreSQL store in a database of its own (no ?schema=)', () => {
  const name = `reglookup_db_${process.pid}_${Date.now().toString(36)}`;
  const dbUrl = (() => {
    const u = new URL(PG_BASE_URL);
    u.pathname = `/${name}`;
    return u.toString();
  })();
  let admin: pg.Client;
  const stores: PostgresStore[] = [];
  const others = async (probe: pg.Client) =>
    (
      await probe.query<{ application_name: string }>(
        'SELECT application_name FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() ORDER BY application_name',
        [name],
      )
    ).rows.map((r) => r.application_name);

  beforeAll(async () => {
    admin = await connect(PG_BASE_URL);
    await admin.query(`CREATE DATABASE "${name}"`);
    // A limit set on the database: DATABASE_STATEMENT_TIMEOUT_MS=0 must still mean none.
    await admin.query(`ALTER DATABASE "${name}" SET statement_timeout = '100ms'`);
  });
  afterAll(async () => {
    for (const st of stores) await st.close();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  test("the tables go to the server's search_path (public); at most DATABASE_POOL connections, named reglookup", async () => {
    const store = new PostgresStore(dbUrl, { pool: 3, statementTimeoutMs: 0 });
    stores.push(store);
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'P1', state: '', payload: '{"v":1}' }, true);
    await batch.commit();
    const probe = await connect(dbUrl);
    try {
      expect(
        (await probe.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'records'")).rows,
      ).toEqual([{ table_schema: 'public' }]);
      // No schema of its own is made.
      expect(
        (
          await probe.query(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'",
          )
        ).rows,
      ).toEqual([{ nspname: 'public' }]);
      expect(await Promise.all(Array.from({ length: 20 }, () => store.count()))).toEqual(Array(20).fill(1));
      expect(await others(probe)).toEqual(['reglookup', 'reglookup', 'reglookup']);
    } finally {
      await probe.end();
    }
  });

  test('DATABASE_STATEMENT_TIMEOUT_MS=0: a lookup waits behind a lock for longer than the limit the database sets', async () => {
    const store = new PostgresStore(dbUrl, { pool: 2, statementTimeoutMs: 0 });
    stores.push(store);
    expect(await store.count()).toBe(1);
    const probe = await connect(dbUrl);
    try {
      await probe.query('SET statement_timeout = 0');
      await probe.query('BEGIN');
      await probe.query('LOCK TABLE records IN ACCESS EXCLUSIVE MODE');
      const lookup = store.get({ operation: 'Check', registration: 'P1', state: '' });
      await sleep(400);
      await probe.query('COMMIT');
      expect(await lookup).toEqual({ payload: '{"v":1}' });
    } finally {
      await probe.end();
    }
    // The same wait with a limit of the service's own fails at it.
    const limited = new PostgresStore(dbUrl, { pool: 1, statementTimeoutMs: 150 });
    stores.push(limited);
    expect(await limited.count()).toBe(1);
    const holder = await connect(dbUrl);
    try {
      await holder.query('SET statement_timeout = 0');
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE records IN ACCESS EXCLUSIVE MODE');
      const release = setTimeout(() => void holder.query('COMMIT').catch(() => undefined), 2000);
      try {
        await expect(limited.get({ operation: 'Check', registration: 'P1', state: '' })).rejects.toThrow(
          /statement timeout/,
        );
      } finally {
        clearTimeout(release);
      }
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
  });

  test("the URL's own parameters reach the server: ?application_name= names the connections, ?options= sets server settings", async () => {
    const probe = await connect(dbUrl);
    try {
      await probe.query('CREATE SCHEMA elsewhere');
      const u = new URL(dbUrl);
      u.searchParams.set('application_name', 'mine');
      u.searchParams.set('options', '-c search_path=elsewhere');
      const store = new PostgresStore(u.toString(), { pool: 1 });
      stores.push(store);
      expect(await store.isEmpty()).toBe(true);
      expect(
        (
          await probe.query(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'records' ORDER BY table_schema",
          )
        ).rows,
      ).toEqual([{ table_schema: 'elsewhere' }, { table_schema: 'public' }]);
      expect(await others(probe)).toContain('mine');
    } finally {
      await probe.end();
    }
  });
});
