// The scale-out settings, as the README's Configuration table gives them.

import os from 'node:os';
import { loadConfig } from '../../src/config';
import { openStore } from '../../src/store/open';

test('WORKERS=auto is one worker per core the process may use', () => {
  expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(os.availableParallelism());
  expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
  expect(() => loadConfig({ WORKERS: 'many' })).toThrow(/WORKERS must be a whole number.*'auto'/);
});

test('DATABASE_POOL: 10 by default, 1 to 1000', () => {
  expect(loadConfig({}).databasePool).toBe(10);
  expect(loadConfig({ DATABASE_POOL: '1000' }).databasePool).toBe(1000);
  expect(() => loadConfig({ DATABASE_POOL: '0' })).toThrow(/DATABASE_POOL must be between 1 and 1000/);
});

test('DATABASE_STATEMENT_TIMEOUT_MS: 5000 by default, 0 (none) to 3600000', () => {
  expect(loadConfig({}).databaseStatementTimeoutMs).toBe(5000);
  expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).databaseStatementTimeoutMs).toBe(0);
  expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '3600001' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
});

test('DATABASE_URL: a schema that is not a plain lower-case name, or another kind of database, is refused without showing the password', () => {
  expect(() => openStore('postgres://u:hunter2@127.0.0.1/test?schema=a;drop')).toThrow(
    /\?schema= must be a plain identifier/,
  );
  expect(() => openStore('postgres://u:hunter2@127.0.0.1/test?schema=Mixed')).toThrow(
    /\?schema= must be a plain identifier/,
  );
  let message = '';
  try {
    openStore('mysql://u:hunter2@127.0.0.1/test');
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toMatch(/not supported; use sqlite:PATH or postgres:\/\//);
  expect(message).not.toContain('hunter2');
});

test('issue 30: DATABASE_READ_URL is postgres:// URLs, comma-separated, only beside a PostgreSQL DATABASE_URL; never echoes a password', () => {
  const primary = 'postgres://u@10.0.0.1/reg';
  expect(loadConfig({ DATABASE_URL: primary }).databaseReadUrls).toEqual([]);
  expect(
    loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgres://u@10.0.0.2/reg, postgresql://u@10.0.0.3/reg' })
      .databaseReadUrls,
  ).toEqual(['postgres://u@10.0.0.2/reg', 'postgresql://u@10.0.0.3/reg']);
  let message = '';
  try {
    loadConfig({
      DATABASE_URL: primary,
      DATABASE_READ_URL: 'postgres://u@10.0.0.2/reg,mysql://u:hunter2@10.0.0.3/reg',
    });
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toBe('DATABASE_READ_URL must be postgres:// URLs separated by commas; item 2 is not one');
  expect(() => loadConfig({ DATABASE_URL: 'sqlite:x.db', DATABASE_READ_URL: 'postgres://u@10.0.0.2/reg' })).toThrow(
    /DATABASE_READ_URL names read replicas of a PostgreSQL DATABASE_URL/,
  );
  // A replica's tables are the primary's: a different ?schema= is refused.
  expect(() => openStore(`${primary}?schema=a`, { readUrls: ['postgres://u@10.0.0.2/reg?schema=b'] })).toThrow(
    /replica 1's \?schema= differs/,
  );
});

test('issue 30: DATABASE_READ_MAX_LAG_MS: 1000 by default, 100 to 3600000', () => {
  expect(loadConfig({}).databaseReadMaxLagMs).toBe(1000);
  expect(loadConfig({ DATABASE_READ_MAX_LAG_MS: '100' }).databaseReadMaxLagMs).toBe(100);
  expect(() => loadConfig({ DATABASE_READ_MAX_LAG_MS: '99' })).toThrow(
    /DATABASE_READ_MAX_LAG_MS must be between 100 and 3600000/,
  );
});
