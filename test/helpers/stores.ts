// The stores a suite runs against: describeStores runs its cases once per store under test (the
// jest project chooses: see helpers/postgres.ts). SQLite in a temporary file; PostgreSQL in a schema
// of its own on the machine's server.

import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RecordKey, VehicleStore } from '../../src/store/store';
import { openStore } from '../../src/store/open';
import { describePostgres, sqlIn, storeTested, testSchema, type StoreName } from './postgres';

export interface StoreKind {
  readonly name: StoreName;
  /** A DATABASE_URL for a fresh, empty store of this kind. */
  url(): string;
  /** Sets a record's payload as another writer would (an older release, a hand-run UPDATE). */
  rawSetPayload(url: string, key: RecordKey, payload: string): Promise<void>;
  /** Removes every store made by url(). */
  cleanup(): Promise<void>;
}

function sqliteKind(): StoreKind {
  const dirs: string[] = [];
  return {
    name: 'sqlite',
    url() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-stores-'));
      dirs.push(dir);
      return `sqlite:${path.join(dir, 'store.db')}`;
    },
    async rawSetPayload(url, key, payload) {
      const db = new Database(url.slice('sqlite:'.length));
      db.pragma('busy_timeout = 5000');
      db.prepare('UPDATE records SET payload = ? WHERE operation = ? AND registration = ? AND state = ?').run(
        payload,
        key.operation,
        key.registration,
        key.state,
      );
      db.close();
      // The store sees another connection's write from its next event-loop turn (sqlite.ts).
      await new Promise((resolve) => setImmediate(resolve));
    },
    async cleanup() {
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

function postgresKind(): StoreKind {
  const schemas: ReturnType<typeof testSchema>[] = [];
  return {
    name: 'postgres',
    url() {
      const s = testSchema();
      schemas.push(s);
      return s.url;
    },
    async rawSetPayload(url, key, payload) {
      const schema = new URL(url).searchParams.get('schema') as string;
      await sqlIn(schema, 'UPDATE records SET payload = $1 WHERE operation = $2 AND registration = $3 AND state = $4', [
        payload,
        key.operation,
        key.registration,
        key.state,
      ]);
    },
    async cleanup() {
      for (const s of schemas.splice(0)) await s.drop();
    },
  };
}

/** A kind of store, with the stores it makes removed by its cleanup(). */
export function storeKind(name: StoreName): StoreKind {
  return name === 'sqlite' ? sqliteKind() : postgresKind();
}

/**
 * `describe` once per store this run tests (`%s` in the title is the store's name), each with a kind of its own whose
 * stores are removed after the block.
 */
export function describeStores(title: string, fn: (kind: StoreKind) => void): void {
  const block = (name: StoreName) => () => {
    const kind = storeKind(name);
    fn(kind);
    // After the block's own afterAll hooks (run in the order declared), which close its stores.
    afterAll(() => kind.cleanup());
  };
  if (storeTested('sqlite')) describe(title.replace('%s', 'sqlite'), block('sqlite'));
  describePostgres(title.replace('%s', 'postgres'), block('postgres'));
}

export function open(url: string): VehicleStore {
  return openStore(url, { pool: 10, statementTimeoutMs: 5000 });
}
