/**
 * `npm run faults`: the fault-injection scenarios (test/faults), each with its summary of what was answered, charged
 * and logged.
 */
const base = require('./jest.config');
module.exports = {
  ...base,
  roots: ['<rootDir>/test/faults'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/test/faults/summary.js'],
};
