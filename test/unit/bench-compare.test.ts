// The bench's command line and its side-by-side table (`npm run bench -- --against REF`, issue 29).
// Expectations are written by hand here; the bench's speed itself is never asserted.

import {
  comparisonTable,
  median,
  parseBenchArgs,
  parseEnvList,
  previousReleaseTag,
  roundRatio,
} from '../../bench/compare';

describe('parseBenchArgs', () => {
  test('no arguments: the full SQLite run, no comparison', () => {
    expect(parseBenchArgs([])).toEqual({
      short: false,
      profile: false,
      prepareOnly: false,
      quick: false,
      metered: false,
      store: 'sqlite',
      against: undefined,
    });
    expect(parseBenchArgs(['--metered']).metered).toBe(true);
  });

  test('--against REF and --against=REF name the ref to compare with', () => {
    expect(parseBenchArgs(['--against', '1ef37ce']).against).toBe('1ef37ce');
    expect(parseBenchArgs(['--against=v0.2.0']).against).toBe('v0.2.0');
    expect(parseBenchArgs(['--short', '--against', 'origin/main~3']).against).toBe('origin/main~3');
    expect(parseBenchArgs(['--short', '--against', 'origin/main~3']).short).toBe(true);
  });

  test('--against without a ref, or with something that is no ref, is refused in one line', () => {
    expect(() => parseBenchArgs(['--against'])).toThrow('--against needs a value');
    expect(() => parseBenchArgs(['--against', '--short'])).toThrow('--against needs a value');
    expect(() => parseBenchArgs(['--against=a b'])).toThrow(
      "--against takes a git ref (a commit, tag or branch), got 'a b'",
    );
    expect(() => parseBenchArgs(['--against='])).toThrow('--against takes a git ref');
  });

  test('--against does not combine with the profile, the prepare-only run or PostgreSQL', () => {
    expect(() => parseBenchArgs(['--against', 'main', '--profile'])).toThrow('--against cannot be combined');
    expect(() => parseBenchArgs(['--prepare', '--against', 'main'])).toThrow('--against cannot be combined');
    expect(() => parseBenchArgs(['--against', 'main', '--store', 'postgres'])).toThrow('--against cannot be combined');
  });

  test('--store takes sqlite or postgres, in either spelling', () => {
    expect(parseBenchArgs(['--store', 'postgres']).store).toBe('postgres');
    expect(parseBenchArgs(['--store=postgres', '--quick']).quick).toBe(true);
    expect(() => parseBenchArgs(['--store', 'mysql'])).toThrow("--store must be sqlite or postgres, got 'mysql'");
  });

  test('an unknown argument is an error that lists the known ones', () => {
    expect(() => parseBenchArgs(['--agianst', 'main'])).toThrow("unknown argument '--agianst'; known: --short");
  });
});

describe('previousReleaseTag', () => {
  test("git describe's tag, or null when there is none", () => {
    expect(previousReleaseTag('v0.2.0\n')).toBe('v0.2.0');
    expect(previousReleaseTag('')).toBeNull();
    expect(previousReleaseTag(null)).toBeNull();
  });
});

describe('medians and ratios', () => {
  test('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  test('the ratio is taken round by round, then the median: a noisy round does not move it', () => {
    // Rounds: 100/200, 150/300, 900/1000 (the machine was busy in round 3 for both).
    expect(roundRatio([100, 150, 900], [200, 300, 1000])).toBe(0.5);
    expect(roundRatio([1, 2], [0, 4])).toBe(0.5);
  });
});

describe('comparisonTable', () => {
  const here = { rps: [9000, 8000, 10000], cpuUs: [100, 110, 90], p99: [10, 12, 11], peakRss: [120, 125, 118] };
  const ref = { rps: [8000, 8000, 8000], cpuUs: [120, 110, 100], p99: [9, 9, 9], peakRss: [110, 111, 112] };

  test('both builds side by side with the ratios, CPU per request working tree over REF', () => {
    const t = comparisonTable('1ef37ce', [{ scenario: 'GET Check', here, ref }]).split('\n');
    expect(t[0]).toBe(
      '| scenario | req/s here | req/s 1ef37ce | req/s ratio | CPU us/req here | CPU us/req 1ef37ce | CPU ratio | p99 ms here | p99 ms 1ef37ce | peak RSS MB here | peak RSS MB 1ef37ce |',
    );
    expect(t[1]).toBe('|---|---|---|---|---|---|---|---|---|---|---|');
    // req/s: medians 9000 and 8000, per-round ratios 1.125, 1, 1.25 -> 1.125 (toFixed(2) of 1.125 is 1.13 or 1.12 by
    // binary rounding: 1.13).
    // CPU: medians 100 and 110; ratios 0.833, 1, 0.9 -> 0.90. p99: 11 and 9. Peak RSS: the highest, 125 and 112.
    expect(t[2]).toBe('| GET Check | 9000 | 8000 | 1.13 | 100 | 110 | 0.90 | 11.0 | 9.0 | 125 | 112 |');
    expect(t).toHaveLength(3);
  });

  test('with bare Express in the same rounds: its CPU, the CPU ratio to it and req/s as a share of it', () => {
    const express = { rps: [10000, 8000, 12500], cpuUs: [100, 100, 100], p99: [5, 5, 5], peakRss: [60, 60, 60] };
    const t = comparisonTable('main', [
      { scenario: 'SOAP 1.1 Check', here, ref, express },
      { scenario: 'SOAP 1.2 Check', here, ref },
    ]).split('\n');
    expect(
      t[0].endsWith('| peak RSS MB main | bare Express CPU us/req | CPU ratio to Express | req/s % of Express |'),
    ).toBe(true);
    // CPU ratios 1, 1.1, 0.9 -> 1.00; req/s shares 0.9, 1, 0.8 -> 90 %.
    expect(t[2]).toBe(
      '| SOAP 1.1 Check | 9000 | 8000 | 1.13 | 100 | 110 | 0.90 | 11.0 | 9.0 | 125 | 112 | 100 | 1.00 | 90 % |',
    );
    expect(t[3]).toBe(
      '| SOAP 1.2 Check | 9000 | 8000 | 1.13 | 100 | 110 | 0.90 | 11.0 | 9.0 | 125 | 112 | - | - | - |',
    );
  });
});

describe('parseEnvList (BENCH_HERE_ENV)', () => {
  test('NAME=value pairs separated by spaces; empty is none', () => {
    expect(parseEnvList('METRICS=off  LOG_LEVEL=warn')).toEqual({ METRICS: 'off', LOG_LEVEL: 'warn' });
    expect(parseEnvList('RATE_LIMIT=0')).toEqual({ RATE_LIMIT: '0' });
    expect(parseEnvList('  ')).toEqual({});
  });
  test('anything else is refused, naming it', () => {
    expect(() => parseEnvList('METRICS')).toThrow("BENCH_HERE_ENV: 'METRICS' is not NAME=value");
    expect(() => parseEnvList('metrics=off')).toThrow("'metrics=off' is not NAME=value");
  });
});
