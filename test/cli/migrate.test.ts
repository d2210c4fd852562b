// `reglookup migrate` and `reglookup serve` on SQLite files of other releases, as an operator runs
// them: an old file upgraded by the command, which says what it applied; a file of a newer release
// refused at start-up with exit status 2. (The migrations themselves: test/store/sqlite-migrations.test.ts.)

import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite';
import { runCli, startCli } from '../helpers/cli';
import { V1_DDL } from '../helpers/sqlite-schemas';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-migrate-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
function newFile(ddl?: string): string {
  const file = path.join(dir, `store-${++n}.db`);
  if (ddl !== undefined) {
    const db = new Database(file);
    db.exec(ddl);
    db.close();
  }
  return file;
}

describe('SQLite migrations', () => {
  test('a file written by a newer release is refused, not served', async () => {
    const file = newFile();
    await new SqliteStore(file).close();
    const db = new Database(file);
    db.prepare("INSERT INTO schema_version (version, name) VALUES (99, 'from the future')").run();
    db.close();
    expect(() => new SqliteStore(file)).toThrow(/schema version 99, newer than this release knows/);
    const run = startCli(['serve'], { DATABASE_URL: `sqlite:${file}`, PORT: '0', HOST: '127.0.0.1' });
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(/DATABASE_URL .*schema version 99, newer than this release knows/);
  });

  test('`reglookup migrate` on an old file applies the missing steps and says so; run again, it has nothing to do', () => {
    const file = newFile(V1_DDL);
    const run = () => runCli(['migrate'], { DATABASE_URL: `sqlite:${file}`, LOG_LEVEL: 'silent' });
    const first = run();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(
      /^applied 2: .+\napplied 3: .+\napplied 4: .+\napplied 5: .+\napplied 6: .+\napplied 7: .+\napplied accounts file 2: .+\napplied accounts file 3: .+\n.*schema version 7 \(accounts file 3\)\n$/,
    );
    const second = run();
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/schema version 7 \(accounts file 3\), nothing to apply\n$/);
  });
});
