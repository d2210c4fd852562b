// DVSA_* and RDW_* (docs/configuration.md): DVSA is off until its three credentials are set, all
// or none (a partial set stops start-up naming the missing ones, never a value); secrets may come
// from *_FILE (Docker secrets), not both; upstream URLs are https://, plain http only to loopback.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

const creds = { DVSA_CLIENT_ID: 'id-1', DVSA_CLIENT_SECRET: 'secret-1', DVSA_API_KEY: 'key-1' };
const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
};

test('unset: no DVSA; RDW on its public host with no token', () => {
  const c = loadConfig({});
  expect(c.dvsa).toBeNull();
  expect(c.rdw).toEqual({ url: 'https://opendata.rdw.nl', appToken: null });
});

test('the three credentials: DVSA on its published hosts', () => {
  expect(loadConfig(creds).dvsa).toEqual({
    url: 'https://history.mot.api.gov.uk',
    tokenUrl: 'https://login.microsoftonline.com/a455b827-244f-4c97-b5b4-ce5d13b4d00c/oauth2/v2.0/token',
    clientId: 'id-1',
    clientSecret: 'secret-1',
    scope: 'https://tapi.dvsa.gov.uk/.default',
    apiKey: 'key-1',
    quotaProcesses: 1,
  });
});

test('DVSA_QUOTA_PROCESSES: the processes sharing the quota, 1 unless set', () => {
  expect(loadConfig({ ...creds, DVSA_QUOTA_PROCESSES: '4' }).dvsa?.quotaProcesses).toBe(4);
  expect(refusal({ ...creds, DVSA_QUOTA_PROCESSES: '0' })).toMatch(/DVSA_QUOTA_PROCESSES/);
});

test('a partial set names what is missing and shows no value', () => {
  const why = refusal({ DVSA_CLIENT_ID: 'id-1', DVSA_CLIENT_SECRET: 'secret-1' });
  expect(why).toMatch(/DVSA_API_KEY/);
  expect(why).not.toContain('secret-1');
});

test('secrets from *_FILE, trimmed; not both; an unreadable file named without its content', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-secrets-'));
  fs.writeFileSync(path.join(dir, 'secret'), 'file-secret\n');
  fs.writeFileSync(path.join(dir, 'key'), 'file-key\n');
  fs.writeFileSync(path.join(dir, 'token'), ' app-token \n');
  const env = {
    DVSA_CLIENT_ID: 'id-1',
    DVSA_CLIENT_SECRET_FILE: path.join(dir, 'secret'),
    DVSA_API_KEY_FILE: path.join(dir, 'key'),
    RDW_APP_TOKEN_FILE: path.join(dir, 'token'),
  };
  const c = loadConfig(env);
  expect([c.dvsa?.clientSecret, c.dvsa?.apiKey, c.rdw.appToken]).toEqual(['file-secret', 'file-key', 'app-token']);
  expect(refusal({ ...env, DVSA_API_KEY: 'key-2' })).toMatch(/DVSA_API_KEY and DVSA_API_KEY_FILE are both set/);
  expect(refusal({ ...env, DVSA_API_KEY_FILE: path.join(dir, 'nope') })).toMatch(
    /DVSA_API_KEY_FILE names .*nope, which cannot be read/,
  );
  fs.rmSync(dir, { recursive: true });
});

test('upstream URLs: https anywhere, plain http only to a loopback address; a trailing slash dropped', () => {
  expect(loadConfig({ RDW_URL: 'http://127.0.0.1:9999/' }).rdw.url).toBe('http://127.0.0.1:9999');
  expect(refusal({ RDW_URL: 'http://opendata.rdw.nl' })).toMatch(/RDW_URL must be an https:\/\/ URL/);
  expect(refusal({ ...creds, DVSA_TOKEN_URL: 'http://login.example.com/token' })).toMatch(/DVSA_TOKEN_URL/);
  expect(loadConfig({ ...creds, DVSA_URL: 'http://localhost:8081' }).dvsa?.url).toBe('http://localhost:8081');
});
