/**
 * `npm run faults`: the fault-injection scenarios (test/faults), each with its summary of what was answered, charged
 * and logged.
 */
const { projects } = require('./jest.config');

const { displayName: _name, testMatch: _match, globals: _globals, ...base } = projects[0];
module.exports = {
  ...base,
  roots: ['<rootDir>/test/faults'],
  globalSetup: '<rootDir>/test/helpers/build.js',
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/test/faults/summary.js'],
};
