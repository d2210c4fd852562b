// `reglookup cache stats|purge`, export and backup with and without --with-cache, on every store, as
// an operator runs them (docs/upstream.md, The cache). (The cache's storage: test/store/upstream-cache.test.ts.)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { VehicleStore } from '../../src/store/store';
import { fill } from '../helpers/cached-answers';
import { runCli } from '../helpers/cli';
import { describeStores, open } from '../helpers/stores';

describeStores('%s store: the upstream cache', (kind) => {
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
