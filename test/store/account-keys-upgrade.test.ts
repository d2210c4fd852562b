// Issue 45: a PostgreSQL store of the release before keys (schema version 7, usernames in clear) is
// upgraded by the first of two instances started together, while lookups run: a process charging
// as that release did (by the clear username) until the rewrite, and both new instances as soon as
// each listens. Credits stay exact across it: every credit taken is one lookup answered, and the
// balance (row and credit shards) ends where the answers say; no table keeps the username.

import { createHash } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres';
import { startServeProcess, type ServeProcess } from '../helpers/cli';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateSqlite } from '../../src/store/migrations/sqlite';
import { SQLITE_ACCOUNTS_MIGRATIONS } from '../../src/store/migrations/sqlite-accounts';
import { SqliteStore } from '../../src/store/sqlite';
import { oldLayoutStore } from '../helpers/sqlite-layout';
import { describePostgres, describeSqlite, sqlIn, testSchema } from '../helpers/postgres';

jest.setTimeout(180_000);

const USERNAME = 'acme-live-7f3e2a9c1d4b-caller';
/** docs/security.md: the key is SHA-256 of the username's UTF-8, in hex. */
const KEY = createHash('sha256').update(USERNAME, 'utf8').digest('hex');
const ROW = 300;
const SHARD = 50;

describePostgres('upgrading a PostgreSQL store to keyed accounts, two instances and lookups at once', () => {
  const schema = testSchema();
  const servers: ServeProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await schema.drop();
  });

  test('credits exact: taken == answered, by the old release and the new instances together', async () => {
    const old = new PostgresStore(schema.url);
    expect((await old.migrate(7)).version).toBe(7);
    await old.close();
    // As the release before keys left it: the row, a shard an instance of it leased, usage of an earlier day.
    await sqlIn(schema.schema, 'INSERT INTO accounts (username, credits) VALUES ($1, $2)', [USERNAME, ROW]);
    await sqlIn(schema.schema, 'INSERT INTO credit_shards (username, shard, credits) VALUES ($1, 424242, $2)', [
      USERNAME,
      SHARD,
    ]);
    await sqlIn(
      schema.schema,
      "INSERT INTO usage (username, day, operation, found, not_found) VALUES ($1, '2026-01-02', 'Check', 4, 1)",
      [USERNAME],
    );

    // The old release's charge (one conditional UPDATE by the username), in a loop until the upgrade hides the row.
    const client = new pg.Client({
      connectionString: schema.url.replace(/\?.*$/, ''),
      options: `-c search_path=${schema.schema}`,
    });
    await client.connect();
    let oldAnswered = 0;
    let oldRefused = 0;
    let stopOld = false;
    const oldCharger = (async () => {
      while (!stopOld && oldRefused === 0) {
        const r = await client.query(
          'UPDATE accounts SET credits = credits - 1 WHERE username = $1 AND credits > 0 RETURNING credits',
          [USERNAME],
        );
        if (r.rowCount === 1) oldAnswered++;
        else oldRefused++;
        // 50 a second: the balance outlasts the instances' start, so the upgrade comes while it charges.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    const env = { DATABASE_URL: schema.url, USERNAME_POLICY: 'registered', RATE_LIMIT: '0' };
    const lookups = async (srv: ServeProcess, n: number) => {
      const codes: string[] = [];
      for (let i = 0; i < n; i += 20)
        codes.push(
          ...(await Promise.all(
            Array.from({ length: 20 }, () =>
              fetch(`${srv.base}/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=${USERNAME}`).then(async (r) =>
                r.status === 200 ? 'ok' : ((await r.text()).split(':')[0] ?? String(r.status)),
              ),
            ),
          )),
        );
      return codes;
    };
    const started = [startServeProcess(env), startServeProcess(env)];
    const answers = await Promise.all(
      started.map((p) =>
        p.then((srv) => {
          servers.push(srv);
          return lookups(srv, 200);
        }),
      ),
    );
    stopOld = true;
    await oldCharger;
    await client.end();

    const codes = answers.flat();
    const newAnswered = codes.filter((c) => c === 'ok').length;
    // 400 lookups against at most 350 credits: every credit is taken, each by one answered lookup.
    expect(new Set(codes)).toEqual(new Set(['ok', 'OUT_OF_CREDIT']));
    expect(oldAnswered).toBeGreaterThan(0);
    expect(newAnswered).toBeGreaterThan(SHARD);
    expect(oldAnswered + newAnswered).toBe(ROW + SHARD);
    // The upgrade's one transaction: once committed the old release's charge finds no row of the username.
    expect(oldRefused).toBe(1);

    const shards = await sqlIn<{ n: string }>(
      schema.schema,
      'SELECT COALESCE(SUM(credits), 0) AS n FROM credit_shards',
    );
    const rows = await sqlIn<{ username: string; name: string; credits: string }>(
      schema.schema,
      'SELECT username, name, credits FROM accounts',
    );
    expect(rows).toEqual([{ username: KEY, name: `acme-l-${KEY.slice(0, 12)}`, credits: '0' }]);
    expect(Number(shards[0].n)).toBe(0);
    // The usage the instances counted, beside the earlier day's, under the key.
    const usage = await sqlIn<{ day: string; found: string }>(
      schema.schema,
      'SELECT day, SUM(found) AS found FROM usage_all WHERE username = $1 GROUP BY day ORDER BY day',
      [KEY],
    );
    expect(usage[0]).toEqual({ day: '2026-01-02', found: '4' });
    expect(usage.slice(1).reduce((t, u) => t + Number(u.found), 0)).toBe(newAnswered);
    for (const table of ['accounts', 'usage', 'usage_shards', 'credit_shards', 'audit'])
      expect(
        await sqlIn(schema.schema, `SELECT 1 FROM ${table} t WHERE position($1 in t::text) > 0`, [USERNAME]),
      ).toEqual([]);
    // Both instances name the account in their access lines.
    for (const srv of servers) expect(srv.output()).toContain(`"account":"acme-l-${KEY.slice(0, 12)}"`);
  });
});

describeSqlite('upgrading a SQLite store to keyed accounts', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-keys-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Every byte of the store's files (with their logs), as text a grep -a would read. */
  const bytes = (file: string) =>
    fs
      .readdirSync(path.dirname(file))
      .filter((f) => f.startsWith(path.basename(file, '.db')))
      .map((f) => fs.readFileSync(path.join(path.dirname(file), f)).toString('latin1'))
      .join('\n');

  test('a store of the previous release (two files): no byte of either file holds the username afterwards', async () => {
    const file = path.join(dir, 'two.db');
    const accounts = new Database(path.join(dir, 'two.accounts.db'));
    migrateSqlite(accounts, 1, SQLITE_ACCOUNTS_MIGRATIONS);
    accounts.prepare('INSERT INTO accounts (username, credits) VALUES (?, 5)').run(USERNAME);
    accounts
      .prepare("INSERT INTO usage (username, day, operation, found) VALUES (?, '2026-01-02', 'Check', 3)")
      .run(USERNAME);
    accounts
      .prepare("INSERT INTO audit (at, actor, action, target) VALUES ('2026-01-01T00:00:00Z', 'ops', 'add', ?)")
      .run(USERNAME);
    accounts.close();
    expect(bytes(file)).toContain(USERNAME);
    const store = new SqliteStore(file);
    expect(await store.accounts.getAccount(KEY)).toMatchObject({ name: `acme-l-${KEY.slice(0, 12)}`, credits: 5 });
    await store.close();
    expect(bytes(file)).not.toContain(USERNAME);
  });

  test('a store of the one-file layout (0.3): the move and the keys leave the username in neither file', async () => {
    const file = oldLayoutStore(path.join(dir, 'one.db'));
    expect(bytes(file)).toContain('alice');
    await new SqliteStore(file).close();
    expect(bytes(file)).not.toContain('alice');
  });
});
