// Every configuration variable the README's tables list (Configuration, and Security's Limits) is
// held to its row: its default is what the service takes when it is unset, and its Allowed cell is
// the range the service accepts (min-1, min, max, max+1 of a range; each listed value, and one not
// listed). Rows other engineers add are checked the same way as they land.

import { ConfigError, loadConfig } from '../../src/config';
import { quoted, readmeTables, unquote } from '../helpers/readme';

interface Row {
  readonly name: string;
  readonly dflt: string;
  readonly allowed: string;
}

const tables = readmeTables('Variable', 'Default');
const rows: Row[] = tables.flatMap((t) => {
  if (!t.headers.includes('Allowed')) throw new Error(`the README table under '${t.heading}' has no Allowed column`);
  return t.rows.map((r) => ({ name: unquote(r.Variable), dflt: r.Default, allowed: r.Allowed }));
});
const byName = new Map<string, Row>();
for (const r of rows) byName.set(r.name, r);

function refused(env: Record<string, string>): string | null {
  try {
    loadConfig(env);
    return null;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.message;
  }
}

function expectAccepted(name: string, value: string): void {
  expect([name, value, refused({ [name]: value })]).toEqual([name, value, null]);
}

function expectRefused(name: string, value: string): void {
  const why = refused({ [name]: value });
  expect([name, value, why === null ? 'accepted' : 'refused']).toEqual([name, value, 'refused']);
  expect(why).toContain(name);
}

test('the README documents some variables, each once or the same way twice', () => {
  expect(byName.size).toBeGreaterThan(10);
  for (const r of rows)
    expect([r.name, r.dflt, r.allowed]).toEqual([r.name, byName.get(r.name)!.dflt, byName.get(r.name)!.allowed]);
});

const RANGE = /^(\d+) [–-] (\d+)$/;

describe.each([...byName.values()].map((r) => [r.name, r] as const))('%s', (name, row) => {
  test('its documented default is what the service takes when it is unset', () => {
    if (/unset/.test(row.dflt)) return expect(refused({})).toBeNull();
    const value = unquote(row.dflt);
    expect(JSON.stringify(loadConfig({ [name]: value }))).toBe(JSON.stringify(loadConfig({})));
  });

  const range = RANGE.exec(row.allowed.trim());
  if (range) {
    const [min, max] = [Number(range[1]), Number(range[2])];
    test(`takes ${min} to ${max} and nothing outside`, () => {
      expectAccepted(name, String(min));
      expectAccepted(name, String(max));
      if (min > 0) expectRefused(name, String(min - 1));
      expectRefused(name, String(max + 1));
      expectRefused(name, '12x');
    });
    return;
  }
  const schemes = quoted(row.allowed).filter((v) => /^\w+:\/\/$/.test(v));
  if (/\bURL\b/.test(row.allowed) && schemes.length > 0) {
    test(`takes ${schemes.join(' and ')} URLs and nothing else`, () => {
      for (const s of schemes) expectAccepted(name, `${s}example.com:1234`);
      expectRefused(name, 'ftp://example.com');
      expectRefused(name, 'not a url');
    });
    return;
  }
  // A list of literal values (not patterns such as `sqlite:PATH`, which the store checks when it opens).
  const values = quoted(row.allowed);
  if (
    values.length > 0 &&
    !values.some((v) => /[A-Z]{2,}/.test(v)) &&
    row.allowed
      .replace(/`[^`]*`/g, '')
      .replace(/\([^)]*\)/g, '')
      .replace(/also/g, '')
      .replace(/[\s,]/g, '') === ''
  ) {
    test(`takes ${values.join(', ')} and nothing else`, () => {
      for (const v of values) expectAccepted(name, v);
      expectRefused(name, 'no-such-value');
    });
  }
});

test('TRUST_PROXY takes IP addresses and CIDRs, and refuses anything else', () => {
  expect(byName.has('TRUST_PROXY')).toBe(true);
  expectAccepted('TRUST_PROXY', '10.0.0.0/8,::1');
  expectRefused('TRUST_PROXY', '10.0.0.0/33');
  expectRefused('TRUST_PROXY', 'proxy.example.com');
});

// README, Configuration: "Spaces around a value are ignored, and a variable set to nothing counts as unset."
describe.each([...byName.values()].map((r) => [r.name, r] as const))(
  '%s set to nothing, or with spaces around it',
  (name, row) => {
    const unset = () => JSON.stringify(loadConfig({}));

    test('empty, or only spaces: as if unset', () => {
      expect(JSON.stringify(loadConfig({ [name]: '' }))).toBe(unset());
      expect(JSON.stringify(loadConfig({ [name]: '  ' }))).toBe(unset());
    });

    if (!/unset/.test(row.dflt)) {
      test('its default with spaces around it: the default', () => {
        expect(JSON.stringify(loadConfig({ [name]: ` ${unquote(row.dflt)}\t` }))).toBe(unset());
      });
    }
  },
);

describe('values the generic checks above do not reach', () => {
  it('stops with its parent only when npm started it (npx, npm exec, npm start set npm_command)', () => {
    expect(loadConfig({ npm_command: 'exec' }).stopWithParent).toBe(true);
    expect(loadConfig({ npm_command: 'start' }).stopWithParent).toBe(true);
    // systemd, Docker, nohup or a shell: a parent that exits is no reason to stop.
    expect(loadConfig({}).stopWithParent).toBe(false);
  });

  test('RATE_LIMIT: 0, or a decimal from 0.001 to 1000000 (0.5 is one lookup every 2 s)', () => {
    const rate = (v: string) => loadConfig({ RATE_LIMIT: v }).rateLimit;
    expect([rate('0'), rate('0.001'), rate('0.5'), rate('0.125'), rate('2.75'), rate('1000000')]).toEqual([
      0, 0.001, 0.5, 0.125, 2.75, 1000000,
    ]);
    for (const v of ['0.0009', '1000000.5', '1000001', '-1', '1e3', 'x1', '1x', '1.', '.5', '0,5', 'Infinity', 'NaN'])
      expectRefused('RATE_LIMIT', v);
  });

  test('whole numbers: digits only, nothing before or after them', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '08080' }).port).toBe(8080);
    for (const v of ['x80', '80x', '-80', '+80', '8 0', '80.0', '0x50', '1e3', 'NaN']) expectRefused('PORT', v);
  });

  test('REDIS_PREFIX: at most 100 characters, no spaces (or control characters) within', () => {
    expect(loadConfig({ REDIS_PREFIX: 'a'.repeat(100) }).redisPrefix).toBe('a'.repeat(100));
    expect(loadConfig({ REDIS_PREFIX: 'staging:eu-1:' }).redisPrefix).toBe('staging:eu-1:');
    for (const v of ['a'.repeat(101), 'a b', 'a\tb', 'a\u0001b', 'a\u007fb']) expectRefused('REDIS_PREFIX', v);
  });

  test("SAMPLE_DATA and the other switches: each word only, whole (not 'yesterday', not 'o')", () => {
    expect([
      loadConfig({ SAMPLE_DATA: 'YES' }).loadSampleData,
      loadConfig({ SAMPLE_DATA: 'Off' }).loadSampleData,
    ]).toEqual([true, false]);
    for (const v of ['yesterday', 'ayes', 'on1', 'nope', '10', 'o']) expectRefused('SAMPLE_DATA', v);
  });

  test('HOST: an IP address or a host name, and a dotted quad out of range is refused', () => {
    const longest = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.'); // 253 characters
    for (const v of [
      '127.0.0.1',
      '::',
      '::1',
      'localhost',
      'reg-lookup.internal',
      'a.b.c',
      '3com.example',
      '10.example',
      longest,
    ])
      expect(loadConfig({ HOST: v }).host).toBe(v);
    expectRefused('HOST', longest + 'd');
    for (const v of [
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '-bad.example',
      'bad-.example',
      'a..b',
      'x'.repeat(64),
      'http://x',
      '[::1]',
    ])
      expectRefused('HOST', v);
  });

  test('URL variables: refused with what the README allows named (REDIS_URL, PUBLIC_URL)', () => {
    expect(refused({ REDIS_URL: 'http://example.com' })).toMatch(/redis:\/\/.*rediss:\/\//);
    expect(refused({ REDIS_URL: 'not a url' })).toMatch(/redis:\/\/.*rediss:\/\//);
    expect(refused({ PUBLIC_URL: 'ftp://example.com' })).toMatch(/http/);
    expect(refused({ PUBLIC_URL: 'example.com' })).toMatch(/must be an? [\w ]*URL/);
    expect(refused({ LOG_LEVEL: 'loud' })).toMatch(/error, warn, info, debug, silent.*'loud'/);
  });

  test('PUBLIC_URL is used without its trailing slashes (the WSDL adds /api/reg.asmx to it)', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://reg.example.com/' }).publicUrl).toBe('https://reg.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://reg.example.com/base//' }).publicUrl).toBe('https://reg.example.com/base');
    expect(loadConfig({ PUBLIC_URL: 'https://reg.example.com/a/b' }).publicUrl).toBe('https://reg.example.com/a/b');
  });

  test('DATABASE_URL: the store named is the one used (its form is checked when the store opens)', () => {
    for (const v of [
      'sqlite::memory:',
      'sqlite:/var/lib/reglookup/records.db',
      'postgres://reg@db.internal:5432/reglookup?schema=eu1',
    ]) {
      expect(loadConfig({ DATABASE_URL: v }).databaseUrl).toBe(v);
      expect(loadConfig({ DATABASE_URL: ` ${v} ` }).databaseUrl).toBe(v);
    }
  });

  test('SERVICE_NAMESPACE: a URI without quotes, spaces or markup', () => {
    expect(loadConfig({ SERVICE_NAMESPACE: 'urn:example:reg' }).namespace).toBe('urn:example:reg');
    for (const v of ['http://a b', 'http://a"b', 'http://a<b', 'http://a>b', 'http://a&b'])
      expectRefused('SERVICE_NAMESPACE', v);
  });

  test('METRICS_PORT: not PORT (also when PORT is left at its default)', () => {
    expectRefused('METRICS_PORT', '8080');
    expect(refused({ PORT: '9000', METRICS_PORT: '9000' })).toContain('METRICS_PORT');
    expect(loadConfig({ PORT: '9000', METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
  });

  test('CORS_ORIGINS: the same origin written twice is one; * in a list is refused saying it goes alone', () => {
    expect(
      loadConfig({ CORS_ORIGINS: 'https://a.example, https://A.example:443,,http://a.example' }).corsOrigins,
    ).toEqual(['https://a.example', 'http://a.example']);
    expect(refused({ CORS_ORIGINS: 'https://a.example,*' })).toMatch(/alone/);
    for (const v of [
      'https://a.example/',
      'https://a.example/x',
      'https://a.example?x',
      'https://a.example#x',
      'https://u@a.example',
      'https://u:p@a.example',
      'ftp://a.example',
      'a.example',
    ]) {
      expectRefused('CORS_ORIGINS', v);
    }
  });

  test('RATE_LIMIT_PER_MINUTE stops start-up naming RATE_LIMIT and RATE_LIMIT_BURST (the README, below its table)', () => {
    const why = refused({ RATE_LIMIT_PER_MINUTE: '60' });
    expect(why).toContain('RATE_LIMIT_PER_MINUTE');
    expect(why).toContain('RATE_LIMIT_BURST');
    expect(why).toMatch(/RATE_LIMIT\b/);
  });
});
