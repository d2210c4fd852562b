// DATABASE_URL as the README's Configuration table and its messages give it: `sqlite:PATH`,
// `sqlite::memory:`, `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME]`; anything else
// refused naming the variable, and a password never shown (Importing: "cannot be opened: connect
// ECONNREFUSED 127.0.0.1:5433" with the password as ***).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/config';
import { isMigratable, openStore, redactUrl, sqliteFileOf, storeUnavailable } from '../../src/store/open';
import { parsePostgresUrl } from '../../src/store/postgres';
import type { VehicleStore } from '../../src/store/store';
import { thrown as thrownBy } from '../helpers/refused';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-open-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The error `fn` throws (a test fails when it throws none). */
const thrown = (fn: () => unknown) => thrownBy(fn) as Error;

test('sqlite:PATH names a file, relative or absolute (sqlite:///abs/path too); sqlite::memory: none; other URLs none', () => {
  expect(sqliteFileOf('sqlite:data/reglookup.db')).toBe('data/reglookup.db');
  expect(sqliteFileOf('sqlite:/var/lib/reglookup/r.db')).toBe('/var/lib/reglookup/r.db');
  expect(sqliteFileOf('sqlite:///var/lib/reglookup/r.db')).toBe('/var/lib/reglookup/r.db');
  expect(sqliteFileOf('sqlite::memory:')).toBe(':memory:');
  expect(sqliteFileOf('sqlite:')).toBe('');
  expect(sqliteFileOf('postgres://reglookup@127.0.0.1:5432/reglookup')).toBeNull();
  expect(sqliteFileOf('file:data/reglookup.db')).toBeNull();
  expect(sqliteFileOf('my-sqlite:data/x.db')).toBeNull();
});

test('a sqlite: store is opened at the path given, its folders created when missing, and keeps what is written', async () => {
  const file = path.join(dir, 'not', 'yet', 'there', 'store.db');
  let store: VehicleStore = openStore(`sqlite://${file}`);
  try {
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'OPEN1', state: '', payload: '{"Description":"kept"}' });
    await batch.commit();
  } finally {
    await store.close();
  }
  expect(fs.existsSync(file)).toBe(true);
  store = openStore(`sqlite:${file}`);
  try {
    expect(await store.get({ operation: 'Check', registration: 'OPEN1', state: '' })).toEqual({
      payload: '{"Description":"kept"}',
    });
  } finally {
    await store.close();
  }
});

test('sqlite::memory: opens an empty store that can be migrated', async () => {
  const store = openStore('sqlite::memory:');
  try {
    expect(await store.isEmpty()).toBe(true);
    expect(isMigratable(store)).toBe(true);
  } finally {
    await store.close();
  }
});

test('sqlite: with no path is refused, naming DATABASE_URL and giving an example', () => {
  const e = thrown(() => openStore('sqlite:'));
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toMatch(/^DATABASE_URL sqlite: needs a file path, e\.g\. sqlite:/);
});

test('postgres:// and postgresql:// open a PostgreSQL store without connecting yet; a bad ?schema= is a configuration error', async () => {
  for (const url of [
    'postgres://reglookup:secret@127.0.0.1:1/reglookup',
    'postgresql://reglookup@127.0.0.1:1/reglookup?schema=tenant_1',
  ]) {
    const store = openStore(url, { pool: 2, statementTimeoutMs: 0, cacheTtlMs: 0 });
    expect(isMigratable(store)).toBe(true);
    expect(store.backup).toBeUndefined();
    await store.close();
  }
  const e = thrown(() => openStore('postgres://reglookup:secret@127.0.0.1/reglookup?schema=Tenant'));
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toMatch(/\?schema= must be a plain identifier/);
});

test('another kind of database is refused, naming DATABASE_URL and the two kinds, password hidden', () => {
  const e = thrown(() => openStore('mysql://reglookup:hunter2@db.example.com:3306/reglookup'));
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toBe(
    "DATABASE_URL 'mysql://reglookup:***@db.example.com:3306/reglookup' is not supported; use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE",
  );
});

test('only a URL that begins postgres:// or postgresql:// is PostgreSQL', () => {
  for (const url of [
    'mypostgres://reglookup@db/reglookup',
    'x-postgresql://reglookup@db/reglookup',
    ' postgres://reglookup@db/reglookup',
  ]) {
    const e = thrown(() => openStore(url));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(/is not supported; use sqlite:PATH or postgres:/);
  }
});

test("?schema= and ?options= are taken out of the URL given to the driver; its other parameters stay; a bad schema's message stays one short line", () => {
  expect(
    parsePostgresUrl(
      'postgres://u:p@db:5433/reg?sslmode=require&schema=tenant_1&options=-c%20work_mem%3D64MB&application_name=mine',
    ),
  ).toEqual({
    connectionString: 'postgres://u:p@db:5433/reg?sslmode=require&application_name=mine',
    schema: 'tenant_1',
    options: '-c work_mem=64MB',
  });
  expect(parsePostgresUrl('postgresql://db/reg')).toEqual({
    connectionString: 'postgresql://db/reg',
    schema: null,
    options: null,
  });
  const long = thrown(() => parsePostgresUrl(`postgres://db/reg?schema=${'A'.repeat(5000)}`));
  expect(long.message).toMatch(/^DATABASE_URL \?schema= must be a plain identifier .*, got 'A+'$/);
  expect(long.message.length).toBeLessThan(200);
});

test('a password is hidden wherever the URL is shown; a URL without one is shown as it is', () => {
  expect(redactUrl('postgres://reglookup:secret@127.0.0.1:5433/reglookup')).toBe(
    'postgres://reglookup:***@127.0.0.1:5433/reglookup',
  );
  expect(redactUrl('postgresql://u:p%40ss@db/x?schema=s')).toBe('postgresql://u:***@db/x?schema=s');
  expect(redactUrl('postgres://root@127.0.0.1:5432/test')).toBe('postgres://root@127.0.0.1:5432/test');
  expect(redactUrl('postgres://db.example.com:5432/reglookup')).toBe('postgres://db.example.com:5432/reglookup');
  expect(redactUrl('sqlite:data/reglookup.db')).toBe('sqlite:data/reglookup.db');
});

test("a store that cannot be reached: one line naming DATABASE_URL, the password hidden, and the driver's reason", () => {
  const url = 'postgres://reglookup:secret@127.0.0.1:5433/reglookup';
  const refused = storeUnavailable(
    url,
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' }),
  );
  expect(refused).toBeInstanceOf(ConfigError);
  expect(refused.message).toBe(
    "DATABASE_URL 'postgres://reglookup:***@127.0.0.1:5433/reglookup' cannot be opened: connect ECONNREFUSED 127.0.0.1:5433",
  );
  // Node's AggregateError for a refused connection to every address has an empty message and a code.
  const aggregate = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
  expect(storeUnavailable(url, aggregate).message).toBe(
    "DATABASE_URL 'postgres://reglookup:***@127.0.0.1:5433/reglookup' cannot be opened: ECONNREFUSED",
  );
  expect(storeUnavailable('sqlite:/proc/x.db', 'unable to open database file').message).toBe(
    "DATABASE_URL 'sqlite:/proc/x.db' cannot be opened: unable to open database file",
  );
  expect(storeUnavailable('sqlite:/proc/x.db', null).message).toBe(
    "DATABASE_URL 'sqlite:/proc/x.db' cannot be opened: null",
  );
});

test('isMigratable: a store with migrate(), not one without', async () => {
  const store = openStore(`sqlite:${path.join(dir, 'm.db')}`);
  try {
    expect(isMigratable(store)).toBe(true);
    expect(isMigratable({ ...({} as VehicleStore), migrate: 'no' } as unknown as VehicleStore)).toBe(false);
    expect(isMigratable({} as VehicleStore)).toBe(false);
  } finally {
    await store.close();
  }
});
