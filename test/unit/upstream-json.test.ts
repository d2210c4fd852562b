// Upstream JSON is refused when nested deeper than MAX_JSON_DEPTH, before JSON.parse builds it
// (issue 43, point 5). The depths below are counted by hand from the literal texts.

import { MAX_JSON_DEPTH, nestsDeeperThan, parseUpstreamJson } from '../../src/providers/http';
import { jsonBody } from '../../src/providers/upstream-status';
import { UpstreamFailure } from '../../src/providers/provider';

describe('nestsDeeperThan', () => {
  test.each([
    ['{}', 1],
    ['[[1]]', 2],
    ['{"a":{"b":[{"c":1}]}}', 4],
    ['[[],[],[[]]]', 3],
  ])('%s nests %i levels: deeper than one less, not deeper than itself', (text, depth) => {
    expect(nestsDeeperThan(text, depth - 1)).toBe(true);
    expect(nestsDeeperThan(text, depth)).toBe(false);
  });

  test('brackets inside strings do not count, escaped quotes included', () => {
    expect(nestsDeeperThan('{"a":"[[[[[[[[[["}', 1)).toBe(false);
    expect(nestsDeeperThan('["\\"[[[[[[","{{{{"]', 1)).toBe(false);
    expect(nestsDeeperThan('["\\\\",[[1]]]', 2)).toBe(true);
  });
});

describe('parseUpstreamJson and jsonBody', () => {
  const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  test('64 levels are parsed; 65 are refused, with the reason', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(() => parseUpstreamJson(arrays(64))).not.toThrow();
    expect(() => parseUpstreamJson(objects(65))).toThrow(/nested deeper than 64 levels/);
  });

  test('900 KB of nesting is refused at once, and a provider failure says which upstream', () => {
    const deep = objects(180_000);
    expect(deep.length).toBeGreaterThan(900_000);
    const t = performance.now();
    let thrown: unknown;
    try {
      jsonBody('dvla', 'the DVLA', deep);
    } catch (e) {
      thrown = e;
    }
    expect(performance.now() - t).toBeLessThan(50);
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect((thrown as UpstreamFailure).kind).toBe('permanent');
    expect((thrown as UpstreamFailure).message).toBe(
      `the DVLA answered JSON nested deeper than 64 levels (${deep.length} characters)`,
    );
  });

  test('an ordinary answer parses as JSON.parse would', () => {
    const text = '{"make":"FORD","tests":[{"Result":"Pass","Advisories":["a [b] {c}"]}]}';
    expect(parseUpstreamJson(text)).toEqual(JSON.parse(text));
    expect(jsonBody('rdw', 'RDW', '[]')).toEqual([]);
  });
});
