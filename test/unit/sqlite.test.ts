// The embedded store answers a lookup by index, whatever its size: no table scan.

import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';

test('a lookup is an index search, not a scan', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-sqlite-'));
  const file = path.join(dir, 'plan.db');
  const store = new SqliteStore(file);
  await store.close();
  const db = new Database(file, { readonly: true });
  try {
    const plan = db
      .prepare('EXPLAIN QUERY PLAN SELECT payload, prepared FROM records WHERE operation = ? AND registration = ? AND state = ?')
      .all('Check', 'AB12CDE', '') as { detail: string }[];
    const detail = plan.map((p) => p.detail).join('; ');
    expect(detail).toMatch(/SEARCH records USING INDEX records_key \(operation=\? AND registration=\? AND state=\?\)/);
    expect(detail).not.toMatch(/SCAN/);
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
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
  expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'CA' })).toEqual({ payload: '{"n":4}', prepared: null });
  expect(await store.get({ operation: 'CheckUSA', registration: 'A1', state: 'TX' })).toBeNull();
  await store.close();
});
