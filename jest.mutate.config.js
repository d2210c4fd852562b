/**
 * Jest as Stryker runs it (npm run mutate): the suite without the interop toolkits (minutes per run,
 * and they test other programs' clients) and without the fuzzer (random cases would make a mutant's
 * fate depend on the seed). Child processes (test/integration/cli.test.ts) do not see Stryker's
 * active mutant, so what only they check shows as surviving.
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  // src/ in the roots too, so that Jest's dependency graph (Stryker's findRelatedTests) sees which
  // tests reach a mutated module through the app and the test helpers.
  roots: ['<rootDir>/test', '<rootDir>/src'],
  reporters: ['default'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/interop/', '<rootDir>/test/fuzz/'],
};
