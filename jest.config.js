/**
 * The test suites as Jest projects (ts-jest runs the TypeScript sources directly). `npm test` runs `fast`; `npm run
 * test:all` runs every project; `npm run test:<project>` one of them. Where a suite goes:
 *
 * - fast: test/ outside the folders below: in-process, on SQLite, no server needed (test/unit/ spawns no process).
 * - cli: test/cli/, suites that run `reglookup` as a process of its own.
 * - redis: test/redis/, suites that need redis-server (the machine's on 6379, or private ones).
 * - pg: the PostgreSQL half of any suite of fast, cli or redis: its describePostgres and describeStores blocks
 *   (test/helpers/postgres.ts, stores.ts). Such a suite's other blocks are its SQLite half (describeSqlite).
 * - browser: test/browser/ (Chromium); interop: test/interop/ (the SOAP toolkits); deploy: test/deploy/ (npm pack,
 *   a production install, the compose file, nginx, systemd).
 *
 * test/faults/ runs on its own (npm run faults, jest.faults.config.js): it starts and breaks servers.
 */
const fs = require('node:fs');
const path = require('node:path');

/** The projects that take whole folders; the rest of test/ is fast. */
const FOLDERS = ['cli', 'redis', 'browser', 'interop', 'deploy', 'faults'];
/** Those whose suites run on every store in one project (or, for faults, elsewhere): none of their halves is pg's. */
const OWN_STORES = ['browser', 'interop', 'deploy', 'faults'];

function suites(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : suites(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const SUITES = suites(path.join(__dirname, 'test')).map((file) => {
  const text = fs.readFileSync(file, 'utf8');
  const postgres = /\b(describePostgres|describeStores)\(/.test(text);
  return {
    file,
    folder: path.relative(path.join(__dirname, 'test'), file).split(path.sep)[0],
    postgres,
    // A suite with no PostgreSQL half is all on the default store, SQLite; one with such a half has a SQLite half
    // where it has describeStores, describeSqlite or a top-level describe or test.
    sqlite: !postgres || /\b(describeSqlite|describeStores)\(|^(describe|test|it)\b/m.test(text),
  };
});

const inFolder = (folder) => [`<rootDir>/test/${folder}/**/*.test.ts`];
const files = (keep) => SUITES.filter(keep).map((s) => s.file);

/** The projects whose suites start `reglookup`: the command line compiled first (test/helpers/build.js). */
const SPAWNING = ['cli', 'redis', 'pg', 'deploy'];

function project(displayName, testMatch, stores) {
  return {
    displayName,
    rootDir: __dirname,
    ...(SPAWNING.includes(displayName) ? { globalSetup: '<rootDir>/test/helpers/build.js' } : {}),
    testEnvironment: 'node',
    testMatch,
    testPathIgnorePatterns: ['/node_modules/'],
    // Which half of a suite runs here (test/helpers/postgres.ts); both where none is named.
    globals: stores ? { TEST_STORES: stores } : {},
    transform: {
      '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json', isolatedModules: true }],
    },
  };
}

module.exports = {
  projects: [
    project(
      'fast',
      files((s) => !FOLDERS.includes(s.folder) && s.sqlite),
      'sqlite',
    ),
    project(
      'cli',
      files((s) => s.folder === 'cli' && s.sqlite),
      'sqlite',
    ),
    project('redis', inFolder('redis'), 'sqlite'),
    project(
      'pg',
      files((s) => s.postgres && !OWN_STORES.includes(s.folder)),
      'postgres',
    ),
    project('browser', inFolder('browser')),
    project('interop', inFolder('interop')),
    project('deploy', inFolder('deploy')),
  ],
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
