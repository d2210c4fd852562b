// Where an answer came from and as of when, added to vehicleJson (docs/calling.md, "The age of an
// answer"): the keys after the record's own, its bytes kept, never a key twice; and the import times
// read at most once a second. Expected texts are written out by hand.

import { ImportTimesCache, withProvenance } from '../../src/service/provenance';

/** 15 October 2026, 06:30:00.750 UTC: the fraction is not shown. */
const OCT_15 = Date.UTC(2026, 9, 15, 6, 30, 0, 750);

describe('withProvenance', () => {
  test("the two keys after the record's own, its text byte for byte (1.50 stays 1.50, spaces stay)", () => {
    expect(withProvenance('{"Description":"FORD", "Price":1.50 }', 'import', OCT_15)).toBe(
      '{"Description":"FORD", "Price":1.50 ,"AnswerSource":"import","AnswerAsOf":"2026-10-15T06:30:00Z"}',
    );
  });

  test('an empty record, and one with white space before its end', () => {
    expect(withProvenance('{}', 'dvla', OCT_15)).toBe('{"AnswerSource":"dvla","AnswerAsOf":"2026-10-15T06:30:00Z"}');
    expect(withProvenance('{ \n}', 'cache', null)).toBe('{ \n"AnswerSource":"cache","AnswerAsOf":null}');
  });

  test('a record that holds either key already (an import keeps any key) answers it once, ours', () => {
    const text = withProvenance('{"AnswerSource":"mine","Description":"FORD","AnswerAsOf":"1999"}', 'import', null);
    expect(text).toBe('{"Description":"FORD","AnswerSource":"import","AnswerAsOf":null}');
  });

  test('a key that only begins the same way is left alone', () => {
    expect(withProvenance('{"AnswerCount":2}', 'import', null)).toBe(
      '{"AnswerCount":2,"AnswerSource":"import","AnswerAsOf":null}',
    );
  });
});

describe('ImportTimesCache', () => {
  test('read at most once a second; the first lookups wait for the first read, later ones never', async () => {
    let now = 0;
    let reads = 0;
    let times = new Map([['Check', OCT_15]]);
    const cache = new ImportTimesCache(
      {
        importTimes: async () => {
          reads++;
          return times;
        },
      },
      () => now,
    );
    const [a, b] = [cache.of('Check'), cache.of('CheckUSA')];
    expect(await a).toBe(OCT_15);
    expect(await b).toBeNull();
    expect(reads).toBe(1);
    times = new Map([['Check', OCT_15 + 1000]]);
    now = 999;
    expect(cache.of('Check')).toBe(OCT_15);
    expect(reads).toBe(1);
    now = 1000;
    // Read again in the background: this lookup says the time it had, the next one the new time.
    expect(cache.of('Check')).toBe(OCT_15);
    await new Promise((r) => setImmediate(r));
    expect(cache.of('Check')).toBe(OCT_15 + 1000);
    expect(reads).toBe(2);
  });

  test('a failed read keeps the times read before; a store that keeps none says null', async () => {
    let now = 0;
    let fail = false;
    const cache = new ImportTimesCache(
      {
        importTimes: async () => {
          if (fail) throw new Error('the store is down');
          return new Map([['Check', OCT_15]]);
        },
      },
      () => now,
    );
    expect(await cache.of('Check')).toBe(OCT_15);
    fail = true;
    now = 5000;
    void cache.of('Check');
    await new Promise((r) => setImmediate(r));
    expect(cache.of('Check')).toBe(OCT_15);
    expect(await new ImportTimesCache({}).of('Check')).toBeNull();
  });
});
