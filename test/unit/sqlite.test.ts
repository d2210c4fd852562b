// The embedded store answers a lookup by index, whatever its size: no table scan.

import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';

test('a lookup is an index search on the whole key, not a scan, as the store runs it', async () => {
  // The plan of the store's own lookup statement (lookupPlan), not of a copy of its SQL.
  const store = new SqliteStore(':memory:');
  try {
    const plan = store.lookupPlan();
    expect(plan).toMatch(/\bSEARCH records USING (?:COVERING )?INDEX \w+ \(operation=\? AND registration=\? AND state=\?\)/);
    expect(plan).not.toMatch(/\bSCAN\b/);
  } finally {
    await store.close();
  }
});

test('records with the same key replace each other; keys differ by operation and state', async () => {
  const store = new SqliteStore(':memory:');
  expect(await store.isEmpty()).toBe(true);
  const batch = await store.beginImport();
  await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'CA', payload: '{"n":1}' });
  await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'NY', payload: '{"n":2}' });
  await batch.put({ operation: 'Check', registration: 'A1', state: '', payload: '{"n":3}' });
  await batch.put({ operation: 'CheckUSA', registration: 'A1', state: 'CA', payload: '{"n":4}' });
  await batch.commit();
  expect(await store.count()).toBe(3);
  expect(await store.isEmpty()).toBe(false);
  expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'CA' })).toEqual({ payload: '{"n":4}' });
  expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'TX' })).toBeNull();
  await store.close();
});

describe('lookups in one turn of the event loop share one read transaction', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-share-'));
    file = path.join(dir, 'share.db');
    const store = new SqliteStore(file);
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'S1', state: '', payload: '{"v":1}' });
    await batch.commit();
    await store.close();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("another process's write is seen from the next turn on, and nothing is held open after it", async () => {
    const store = new SqliteStore(file);
    expect((await store.get({ operation: 'Check', registration: 'S1', state: '' }))?.payload).toBe('{"v":1}');
    const other = new Database(file);
    other.pragma('busy_timeout = 2000');
    other.prepare("UPDATE records SET payload = '{\"v\":2}' WHERE registration = 'S1'").run();
    await nextTurn();
    expect((await store.get({ operation: 'Check', registration: 'S1', state: '' }))?.payload).toBe('{"v":2}');
    await nextTurn();
    // With no read left open, a checkpoint can take the whole log back into the file.
    const ckpt = other.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    expect(ckpt[0].busy).toBe(0);
    other.close();
    await store.close();
  });

  test('a write in the same turn as a lookup (a credit, an import) goes through', async () => {
    const store = new SqliteStore(file);
    await store.putAccount({ username: 'c', credits: 2 });
    await nextTurn();
    expect(await store.get({ operation: 'Check', registration: 'S1', state: '' })).not.toBeNull();
    expect(await store.charge('c', '2026-01-01')).toMatchObject({ ok: true, credits: 1 });
    expect(await store.get({ operation: 'Check', registration: 'S1', state: '' })).not.toBeNull();
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'S2', state: '', payload: '{"v":3}' });
    await batch.commit();
    expect((await store.get({ operation: 'Check', registration: 'S2', state: '' }))?.payload).toBe('{"v":3}');
    expect((await store.getAccount('c'))?.credits).toBe(1);
    await store.close();
  });
});
