// SAMPLE_DATA's default and its refusals (issue 42, point 6; docs/configuration.md): the bundled,
// fictional sample is loaded by default only when the store answers alone and NODE_ENV is not
// production; asked for beside an upstream it stops start-up, naming both variables.

import { ConfigError, loadConfig } from '../../src/config';

const DVLA = { DVLA_API_KEY: 'k' };

test.each<[string, Record<string, string>, boolean]>([
  ['the store alone', {}, true],
  ['PROVIDERS=store', { PROVIDERS: 'store' }, true],
  ['PROVIDERS=store,dvla', { PROVIDERS: 'store,dvla', ...DVLA }, false],
  ['PROVIDERS=rdw', { PROVIDERS: 'rdw' }, false],
  ['NODE_ENV=production', { NODE_ENV: 'production' }, false],
  ['NODE_ENV=development', { NODE_ENV: 'development' }, true],
  ['NODE_ENV=production, SAMPLE_DATA=on', { NODE_ENV: 'production', SAMPLE_DATA: 'on' }, true],
  ['SAMPLE_DATA=off', { SAMPLE_DATA: 'off' }, false],
  ['PROVIDERS=store,dvla, SAMPLE_DATA=off', { PROVIDERS: 'store,dvla', SAMPLE_DATA: 'off', ...DVLA }, false],
])('%s: sample loaded %s', (_what, env, loaded) => {
  expect(loadConfig(env).loadSampleData).toBe(loaded);
});

test('NODE_ENV=production is a production start; anything else is not', () => {
  expect([loadConfig({ NODE_ENV: 'production' }).production, loadConfig({ NODE_ENV: 'test' }).production]).toEqual([
    true,
    false,
  ]);
});

test('SAMPLE_DATA=on beside an upstream: refused, naming SAMPLE_DATA and the providers', () => {
  const start = () => loadConfig({ PROVIDERS: 'store,dvla,rdw', SAMPLE_DATA: 'on', ...DVLA });
  expect(start).toThrow(ConfigError);
  expect(start).toThrow(/SAMPLE_DATA is on and PROVIDERS lists dvla, rdw/);
});
