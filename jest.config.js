/** Jest runs the TypeScript sources directly (ts-jest); integration tests start real servers on loopback ports. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The fault scenarios run on their own (npm run faults, in .ci/run): they start and break servers.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json', isolatedModules: true }],
  },
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
