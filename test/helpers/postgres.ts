// PostgreSQL for tests: the machine's server (TEST_DATABASE_URL, default
// postgres://root@127.0.0.1:5432/test), shared with other users of the database, so every test
// run works in a schema of its own (DATABASE_URL's ?schema=) and drops it afterwards.
// Without a server the PostgreSQL tests are skipped with a message, except under CI=true, where
// they fail: .ci/run starts the server first.
// Which half of a suite runs is the jest project's choice (jest.config.js: TEST_STORES): the fast
// and cli projects run the SQLite half, the pg project the PostgreSQL half, so that `npm test` needs
// no server and no test runs twice.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_BASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

let available: boolean | undefined;

/** Whether the server answers (asked once per test file, synchronously, so describe can choose). */
export function postgresAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync(
      process.execPath,
      [
        '-e',
        `const pg=require('pg');const c=new pg.Client(${JSON.stringify(PG_BASE_URL)});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))`,
      ],
      { timeout: 10_000, cwd: __dirname },
    );
    available = probe.status === 0;
    if (!available && process.env.CI !== 'true') {
      process.stderr.write(
        `PostgreSQL tests skipped: no server at ${PG_BASE_URL} (set TEST_DATABASE_URL, or start it: see .ci/run)\n`,
      );
    }
  }
  return available || process.env.CI === 'true';
}

export type StoreName = 'sqlite' | 'postgres';

/** Whether this run holds the suites' half on that store: the jest project's TEST_STORES; both when it sets none. */
export function storeTested(name: StoreName): boolean {
  const chosen = (globalThis as { TEST_STORES?: string }).TEST_STORES ?? 'sqlite,postgres';
  return chosen.split(',').includes(name);
}

/** The SQLite half of a suite that also has a PostgreSQL half: run by the fast and cli projects. */
export function describeSqlite(name: string, fn: () => void): void {
  if (storeTested('sqlite')) describe(name, fn);
}

/**
 * The PostgreSQL half, run by the pg project: `describe` when the server is there (or under CI, where its absence
 * must fail), else `describe.skip`. `present` says whether what the block needs is there, for a block that starts
 * servers of its own.
 */
export function describePostgres(name: string, fn: () => void, present: () => boolean = postgresAvailable): void {
  if (storeTested('postgres')) (present() ? describe : describe.skip)(name, fn);
}

export interface TestSchema {
  /** DATABASE_URL for a store in this schema. */
  readonly url: string;
  readonly schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** A fresh schema name for this run; the store creates it when it first migrates. */
export function testSchema(): TestSchema {
  const schema = `reglookup_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const u = new URL(PG_BASE_URL);
  u.searchParams.set('schema', schema);
  return {
    url: u.toString(),
    schema,
    drop: async () => {
      const client = new pg.Client(PG_BASE_URL);
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs SQL in a schema directly, as another writer of the database would. */
export async function sqlIn<R extends pg.QueryResultRow = pg.QueryResultRow>(
  schema: string,
  sql: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_BASE_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
