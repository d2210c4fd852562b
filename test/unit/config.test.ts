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
  for (const r of rows) expect([r.name, r.dflt, r.allowed]).toEqual([r.name, byName.get(r.name)!.dflt, byName.get(r.name)!.allowed]);
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
  if (values.length > 0 && !values.some((v) => /[A-Z]{2,}/.test(v)) && row.allowed.replace(/`[^`]*`/g, '').replace(/\([^)]*\)/g, '').replace(/also/g, '').replace(/[\s,]/g, '') === '') {
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
