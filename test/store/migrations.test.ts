// PostgreSQL schema migrations: a database written at an older schema version upgrades in place,
// with its data intact; running them again changes nothing; instances starting together take turns.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres';
import { CLI, serveCli, startCli } from '../helpers/cli';
import { startServer } from '../helpers/server';
import { describePostgres, sqlIn, testSchema } from '../helpers/postgres';

describePostgres('PostgreSQL migrations', () => {
  const schemas: ReturnType<typeof testSchema>[] = [];
  const fresh = () => {
    const s = testSchema();
    schemas.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  test('a database at schema version 1 with data upgrades in place; a second run applies nothing', async () => {
    const s = fresh();
    const old = new PostgresStore(s.url);
    expect((await old.migrate(1)).version).toBe(1);
    await old.close();
    // Written as a release at version 1 wrote it: no prepared answers column.
    await sqlIn(
      s.schema,
      "INSERT INTO records (operation, registration, state, payload) VALUES ('Check', 'OLD1', '', '{\"Description\":\"kept\"}')",
    );
    await sqlIn(s.schema, "INSERT INTO accounts (username, credits) VALUES ('kept', 7)");

    const store = new PostgresStore(s.url);
    const report = await store.migrate();
    expect(report.applied.map((m) => m.version)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(report.version).toBe(9);
    expect(await store.get({ operation: 'Check', registration: 'OLD1', state: '' })).toEqual({
      payload: '{"Description":"kept"}',
    });
    // An account written before the account settings existed takes their defaults, and is charged as any other.
    // Known since version 8 by its key, SHA-256 of the username (docs/security.md), named by its prefix and key.
    const kept = createHash('sha256').update('kept').digest('hex');
    expect(await store.accounts.getAccount(kept)).toEqual({
      username: kept,
      name: `k-${kept.slice(0, 12)}`,
      prefix: 'k',
      keyUntil: null,
      weak: 'short',
      credits: 7,
      dailyLimit: null,
      rate: null,
      allow: [],
      enabled: true,
    });
    expect(await store.accounts.charge(kept, '2026-01-01')).toEqual({ ok: true, credits: 6, usedToday: 1 });

    const again = await store.migrate();
    expect(again).toEqual({ applied: [], version: 9 });
    expect(await sqlIn(s.schema, 'SELECT version FROM schema_version ORDER BY version')).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
      { version: 8 },
      { version: 9 },
    ]);
    await store.close();
  });

  test('a database at schema version 3, records stored with prepared answers: version 4 drops them, the records read and import as before', async () => {
    const s = fresh();
    const old = new PostgresStore(s.url);
    expect((await old.migrate(3)).version).toBe(3);
    await old.close();
    await sqlIn(
      s.schema,
      "INSERT INTO records (operation, registration, state, payload, prepared) VALUES ('Check', 'OLD3', '', '{\"Description\":\"kept\"}', 'an answer')",
    );
    await sqlIn(s.schema, "INSERT INTO meta (key, value) VALUES ('prepared_version', 'abc')");
    const store = new PostgresStore(s.url);
    expect((await store.migrate()).applied.map((m) => m.version)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(
      await sqlIn(
        s.schema,
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'records' ORDER BY ordinal_position",
      ),
    ).toEqual(['id', 'operation', 'registration', 'state', 'payload'].map((column_name) => ({ column_name })));
    expect(await sqlIn(s.schema, "SELECT key FROM meta WHERE key = 'prepared_version'")).toEqual([]);
    expect(await store.get({ operation: 'Check', registration: 'OLD3', state: '' })).toEqual({
      payload: '{"Description":"kept"}',
    });
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'OLD3', state: '', payload: '{"Description":"new"}' });
    await batch.commit();
    expect(await store.get({ operation: 'Check', registration: 'OLD3', state: '' })).toEqual({
      payload: '{"Description":"new"}',
    });
    await store.close();
  });

  test('five instances starting together on an empty database: each version is applied once, and all of them serve', async () => {
    const s = fresh();
    const stores = Array.from({ length: 5 }, () => new PostgresStore(s.url));
    const reports = await Promise.all(stores.map((st) => st.migrate()));
    expect(reports.flatMap((r) => r.applied.map((m) => m.version)).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await Promise.all(stores.map((st) => st.isEmpty()))).toEqual([true, true, true, true, true]);
    await Promise.all(stores.map((st) => st.close()));
  });

  test('a database written by a newer release is refused, not served', async () => {
    const s = fresh();
    const store = new PostgresStore(s.url);
    await store.migrate();
    await sqlIn(s.schema, "INSERT INTO schema_version (version, name) VALUES (99, 'from the future')");
    const again = new PostgresStore(s.url);
    await expect(again.isEmpty()).rejects.toThrow(/schema version 99, newer than this release knows/);
    // Asked again, it checks again: once the database is one it knows, the same store object serves.
    await expect(again.isEmpty()).rejects.toThrow(/schema version 99/);
    await sqlIn(s.schema, 'DELETE FROM schema_version WHERE version = 99');
    expect(await again.isEmpty()).toBe(true);
    await Promise.all([store.close(), again.close()]);
  });

  test('`reglookup serve` on an empty database logs the versions it applied before it listens', async () => {
    const s = fresh();
    const { run } = await serveCli({ DATABASE_URL: s.url, SAMPLE_DATA: 'false' });
    try {
      const lines = run.stdout().split('\n');
      const applied = lines.findIndex((l) => l.includes('"message":"applied migrations"'));
      expect(applied).toBeGreaterThanOrEqual(0);
      expect(JSON.parse(lines[applied])).toMatchObject({ versions: [1, 2, 3, 4, 5, 6, 7, 8, 9], version: 9 });
      expect(applied).toBeLessThan(lines.findIndex((l) => l.includes('"message":"listening"')));
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  });

  test('`reglookup serve` on a database written by a newer release stops with exit status 2, naming DATABASE_URL', async () => {
    const s = fresh();
    const store = new PostgresStore(s.url);
    await store.migrate();
    await store.close();
    await sqlIn(s.schema, "INSERT INTO schema_version (version, name) VALUES (99, 'from the future')");
    const run = startCli(['serve'], { DATABASE_URL: s.url, PORT: '0', HOST: '127.0.0.1' });
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(/DATABASE_URL .*schema version 99, newer than this release knows/);
  });

  test('`reglookup migrate` applies the migrations and says so; run again, it has nothing to do', () => {
    const s = fresh();
    const run = () =>
      spawnSync(process.execPath, [CLI, 'migrate'], {
        env: { ...process.env, DATABASE_URL: s.url, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const first = run();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(
      /^applied 1: .+\napplied 2: .+\napplied 3: .+\napplied 4: .+\napplied 5: .+\napplied 6: .+\napplied 7: .+\napplied 8: .+\napplied 9: .+\n.*schema version 9\n$/,
    );
    const second = run();
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/schema version 9, nothing to apply\n$/);
  });
});

describePostgres('PostgreSQL statement timeout', () => {
  const s = testSchema();
  afterAll(() => s.drop());

  test('a lookup stuck behind a lock fails after DATABASE_STATEMENT_TIMEOUT_MS instead of waiting for ever', async () => {
    const store = new PostgresStore(s.url, { statementTimeoutMs: 200 });
    await store.migrate();
    const pg = (await import('pg')).default;
    const locker = new pg.Client({
      connectionString: s.url.replace(/\?.*$/, ''),
      options: `-c search_path=${s.schema}`,
    });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE records IN ACCESS EXCLUSIVE MODE');
      await expect(store.get({ operation: 'Check', registration: 'X', state: '' })).rejects.toThrow(
        /statement timeout/,
      );
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await store.close();
    }
  });
});

describePostgres('PostgreSQL statement timeout over HTTP', () => {
  const s = testSchema();
  afterAll(() => s.drop());

  test('a lookup stuck behind a lock is answered INTERNAL_ERROR, with no SQL in the answer', async () => {
    const srv = await startServer({ DATABASE_URL: s.url, DATABASE_STATEMENT_TIMEOUT_MS: '200' });
    const pg = (await import('pg')).default;
    const locker = new pg.Client({
      connectionString: s.url.replace(/\?.*$/, ''),
      options: `-c search_path=${s.schema}`,
    });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE records IN ACCESS EXCLUSIVE MODE');
      const res = await fetch(`${srv.url}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=demo`);
      const body = await res.text();
      expect(res.status).toBe(500);
      expect(res.headers.get('x-error-code')).toBe('INTERNAL_ERROR');
      expect(body).not.toMatch(/statement|SELECT|records/i);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await srv.close();
    }
  });
});
