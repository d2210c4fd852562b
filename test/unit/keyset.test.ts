// Counting the lines of an import that repeat an earlier line's key, at a size where the table has
// grown many times: the count must be exact.

import { KeySet, keyHash } from '../../src/data/keyset';

test('200,000 distinct keys are all new; 50,000 of them again are all repeats', () => {
  const keys = new KeySet(16);
  const key = (i: number) => `Check\u0001AB${i}CDE\u0001`;
  let repeats = 0;
  for (let i = 0; i < 200_000; i++) if (keys.addSeen(key(i))) repeats++;
  expect(repeats).toBe(0);
  expect(keys.size).toBe(200_000);
  for (let i = 0; i < 200_000; i += 4) if (keys.addSeen(key(i))) repeats++;
  expect(repeats).toBe(50_000);
  // Keys that differ only by operation or state are different keys.
  expect(keys.addSeen('CheckUSA\u0001AB0CDE\u0001CA')).toBe(false);
  expect(keys.addSeen('CheckUSA\u0001AB0CDE\u0001NY')).toBe(false);
  expect(keys.addSeen('CheckUSA\u0001AB0CDE\u0001CA')).toBe(true);
});

test('a key added by its hash (made where the line was parsed) is the same key as added by its text', () => {
  const keys = new KeySet(16);
  for (let i = 0; i < 5_000; i++) {
    const [a, b] = keyHash('Check', `H${i}`, '');
    expect(keys.addHash(a, b)).toBe(false);
  }
  expect(keys.size).toBe(5_000);
  for (let i = 0; i < 5_000; i += 5) expect(keys.addSeen(`Check\u0001H${i}\u0001`)).toBe(true);
  expect(keys.addSeen('Check\u0001H5000\u0001')).toBe(false);
  const [a, b] = keyHash('Check', 'H5000', '');
  expect(keys.addHash(a, b)).toBe(true);
  // The three parts are kept apart: moving a character from one to the next is another key.
  expect(keys.addHash(...keyHash('CheckUSA', 'A1', 'CA'))).toBe(false);
  expect(keys.addHash(...keyHash('CheckUSA', 'A1C', 'A'))).toBe(false);
  expect(keys.addHash(...keyHash('CheckUS', 'AA1', 'CA'))).toBe(false);
  // Hash halves as a typed array hands them over (unsigned) and as plain numbers (possibly negative) are the same key.
  const [x, y] = keyHash('UKMOT', 'M1', '');
  expect(keys.addHash(x | 0, y | 0)).toBe(false);
  expect(keys.addHash(x >>> 0, y >>> 0)).toBe(true);
  // (0, 0) marks an empty slot, so a key whose hash is (0, 0) is still counted.
  expect(keys.addHash(0, 0)).toBe(false);
  expect(keys.addHash(0, 0)).toBe(true);
});
