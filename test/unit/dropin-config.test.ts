// SANDBOX and CORS_ORIGINS as the README's Configuration table gives them: defaults, allowed
// values, and a bad value stopping start-up with a message naming the variable.

import { ConfigError, loadConfig } from '../../src/config';

test('SANDBOX is off by default and takes on/off', () => {
  expect(loadConfig({}).sandbox).toBe(false);
  expect(loadConfig({ SANDBOX: 'on' }).sandbox).toBe(true);
  expect(loadConfig({ SANDBOX: 'off' }).sandbox).toBe(false);
  expect(() => loadConfig({ SANDBOX: 'maybe' })).toThrow(/SANDBOX/);
});

test('CORS_ORIGINS is none by default, * or a list of origins', () => {
  expect(loadConfig({}).corsOrigins).toEqual([]);
  expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
  expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' }).corsOrigins).toEqual([
    'https://app.example.com',
    'http://localhost:3000',
  ]);
});

test.each([
  'app.example.com',
  'https://app.example.com/path',
  'https://app.example.com/',
  'ftp://x.example',
  '*,https://a.example',
  'https://a.example,*',
])('CORS_ORIGINS=%s is refused, naming the variable', (value) => {
  expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
  expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
});

// README, Configuration: SANDBOX takes on/true/yes/1 and off/false/no/0 in any case, as SAMPLE_DATA.
test.each([
  ['on', true],
  ['ON', true],
  ['true', true],
  ['yes', true],
  ['1', true],
  ['off', false],
  ['False', false],
  ['no', false],
  ['0', false],
])('SANDBOX=%s is %s', (value, expected) => {
  expect(loadConfig({ SANDBOX: value }).sandbox).toBe(expected);
  expect(loadConfig({ SAMPLE_DATA: value }).loadSampleData).toBe(expected);
});

// README, Configuration: origins are compared as browsers send Origin (lower-case host, no default
// port); a wildcard within an origin stops start-up rather than matching nothing.
test('CORS_ORIGINS normalises default ports and case as a browser writes Origin', () => {
  expect(
    loadConfig({ CORS_ORIGINS: 'https://app.example.com:443, http://Localhost:80, http://localhost:3000' }).corsOrigins,
  ).toEqual(['https://app.example.com', 'http://localhost', 'http://localhost:3000']);
});

test.each(['https://*.example.com', '*.example.com', 'https://app.example.com?x=1', 'https://user@app.example.com'])(
  'CORS_ORIGINS=%s is refused with a message',
  (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
  },
);

test('a wildcard origin is refused with a message saying to list each origin', () => {
  expect(() => loadConfig({ CORS_ORIGINS: 'https://*.example.com' })).toThrow(/wildcard/);
});
