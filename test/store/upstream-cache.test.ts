// The upstream cache's storage (store/cache.ts), the same on SQLite and PostgreSQL: answers and
// not-founds kept with provider and fetch time, replaced per key, counted and purged by operation
// and registration, apart from the imported records; and `reglookup cache stats|purge`, export and
// backup with and without --with-cache (docs/upstream.md, The cache).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../helpers/cli';
import { open, STORE_KINDS } from './stores';
import type { VehicleStore } from '../../src/store/store';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

async function fill(store: VehicleStore): Promise<void> {
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

describe.each(STORE_KINDS.map((k) => [k.name, k] as const))('%s store: the upstream cache', (_name, kind) => {
  let url: string;
  let store: VehicleStore;
  beforeEach(async () => {
    url = kind.url();
    store = open(url);
    await fill(store);
  });
  afterEach(async () => {
    await store.close();
  });
  afterAll(() => kind.cleanup());

  test('an answer, a not-found and a state key are read back with provider and fetch time; other keys are null', async () => {
    expect(await store.cacheGet({ operation: 'Check', registration: 'AA19AAA', state: '' })).toEqual({
      payload: '{"Description":"FETCHED"}',
      provider: 'dvla',
      fetchedAt: T0,
    });
    expect(await store.cacheGet({ operation: 'Check', registration: 'ER19NFD', state: '' })).toEqual({
      payload: null,
      provider: 'dvla',
      fetchedAt: T0 + 1000,
    });
    expect(await store.cacheGet({ operation: 'CheckUSA', registration: 'ABC123', state: 'CA' })).toEqual({
      payload: '{"Description":"US"}',
      provider: 'regcheck',
      fetchedAt: T0 + 3000,
    });
    expect(await store.cacheGet({ operation: 'CheckUSA', registration: 'ABC123', state: 'NY' })).toBeNull();
    expect(await store.cacheGet({ operation: 'CheckMotorBikeUK', registration: 'AA19AAA', state: '' })).toBeNull();
  });

  test('a second put for a key replaces the first', async () => {
    await store.cachePut({
      operation: 'Check',
      registration: 'AA19AAA',
      state: '',
      provider: 'regcheck',
      fetchedAt: T0 + 9000,
      payload: null,
    });
    expect(await store.cacheGet({ operation: 'Check', registration: 'AA19AAA', state: '' })).toEqual({
      payload: null,
      provider: 'regcheck',
      fetchedAt: T0 + 9000,
    });
  });

  test('cached answers are not records: get, count and export do not see them', async () => {
    expect(await store.get({ operation: 'Check', registration: 'AA19AAA', state: '' })).toBeNull();
    expect(await store.count()).toBe(0);
  });

  test('stats by operation and provider; purge by registration, by operation, then all', async () => {
    expect(await store.cacheStats()).toEqual([
      { operation: 'Check', provider: 'dvla', found: 1, notFound: 1, oldest: T0, newest: T0 + 1000 },
      { operation: 'CheckUSA', provider: 'regcheck', found: 1, notFound: 0, oldest: T0 + 3000, newest: T0 + 3000 },
      { operation: 'UKMOT', provider: 'dvsa', found: 1, notFound: 0, oldest: T0 + 2000, newest: T0 + 2000 },
    ]);
    expect(await store.cacheStats({ registration: 'AA19AAA' })).toHaveLength(2);
    expect(await store.cachePurge({ registration: 'AA19AAA', operation: 'UKMOT' })).toBe(1);
    expect(await store.cachePurge({ registration: 'AA19AAA' })).toBe(1);
    expect(await store.cachePurge({ operation: 'Check' })).toBe(1);
    expect(await store.cachePurge()).toBe(1);
    expect(await store.cacheStats()).toEqual([]);
  });

  test('cache stats and cache purge on the command line', async () => {
    await store.close();
    const env = { DATABASE_URL: url, SAMPLE_DATA: 'false' };
    const stats = runCli(['cache', 'stats'], env);
    expect(stats.stderr).toBe('');
    expect(stats.stdout).toContain(
      'Check dvla: 1 answer(s), 1 not-found, fetched 2026-01-02T03:04:05Z to 2026-01-02T03:04:06Z',
    );
    expect(stats.stdout).toMatch(/4 cached answer\(s\): 3 found, 1 not-found\n$/);
    const one = runCli(['cache', 'purge', '--registration', 'aa19 aaa', '--operation', 'Check'], env);
    expect(one.stdout).toBe('purged 1 cached answer(s); imported records are untouched\n');
    const bad = runCli(['cache', 'purge', '--operation', 'NoSuchOp'], env);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/no operation is named 'NoSuchOp'/);
    expect(runCli(['cache', 'purge'], env).stdout).toBe('purged 3 cached answer(s); imported records are untouched\n');
    store = open(url);
  });

  test('export leaves cached answers out unless --with-cache, which writes the found ones as record lines', async () => {
    await store.close();
    const env = { DATABASE_URL: url, SAMPLE_DATA: 'false' };
    const plain = runCli(['export', '-q'], env);
    expect(plain.stdout).toBe('');
    const withCache = runCli(['export', '-q', '--with-cache'], env);
    expect(withCache.stdout.split('\n').filter(Boolean).sort()).toEqual(
      [
        '{"operation":"Check","registration":"AA19AAA","vehicle":{"Description":"FETCHED"}}',
        '{"operation":"CheckUSA","registration":"ABC123","state":"CA","vehicle":{"Description":"US"}}',
        '{"operation":"UKMOT","registration":"AA19AAA","mot":{"tests":[]}}',
      ].sort(),
    );
    store = open(url);
  });

  if (kind.name === 'sqlite') {
    test('backup leaves the cache out unless --with-cache', async () => {
      await store.close();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-cache-backup-'));
      const env = { DATABASE_URL: url, SAMPLE_DATA: 'false' };
      const count = (file: string) => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare('SELECT COUNT(*) AS n FROM upstream_cache').get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      try {
        expect(runCli(['backup', '-q', path.join(dir, 'plain.db')], env).status).toBe(0);
        // The cache is kept in the accounts file, which a backup writes beside the name given (docs/data.md).
        expect(count(path.join(dir, 'plain.accounts.db'))).toBe(0);
        expect(runCli(['backup', '-q', '--with-cache', path.join(dir, 'full.db')], env).status).toBe(0);
        expect(count(path.join(dir, 'full.accounts.db'))).toBe(4);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
        store = open(url);
      }
    });
  }
});
