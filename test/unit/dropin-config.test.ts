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
  expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
});

test.each(['app.example.com', 'https://app.example.com/path', 'https://app.example.com/', 'ftp://x.example', '*,https://a.example', 'https://a.example,*'])(
  'CORS_ORIGINS=%s is refused, naming the variable',
  (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
  },
);
