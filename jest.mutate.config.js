/**
 * Jest as Stryker runs it (npm run mutate): the suites of the fast, pg and redis projects (jest.config.js) that run
 * the code in this process, on both stores, without the fuzzer (random cases would make a mutant's fate depend on the
 * seed). A suite that starts `reglookup` (test/helpers/cli.ts) is left out: a child process does not see Stryker's
 * active mutant, so what only it checks shows as surviving. Browser, interop and deploy take minutes per run and test
 * other programs' clients.
 */
const fs = require('node:fs');
const path = require('node:path');
const { projects, testTimeout } = require('./jest.config.js');

const IN_PROCESS = ['fast', 'pg', 'redis'];
const [fast] = projects;
const redis = fs
  .readdirSync(path.join(__dirname, 'test/redis'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => path.join(__dirname, 'test/redis', f));
const suites = projects
  .filter((p) => IN_PROCESS.includes(p.displayName))
  .flatMap((p) => (p.displayName === 'redis' ? redis : p.testMatch))
  .filter((f) => !f.includes('/test/fuzz/') && !/helpers\/cli'/.test(fs.readFileSync(f, 'utf8')));

module.exports = {
  ...fast,
  displayName: undefined,
  globals: {},
  testMatch: [...new Set(suites)],
  testTimeout,
  // src/ in the roots too, so that Jest's dependency graph (Stryker's findRelatedTests) sees which
  // tests reach a mutated module through the app and the test helpers.
  roots: ['<rootDir>/test', '<rootDir>/src'],
  reporters: ['default'],
};
