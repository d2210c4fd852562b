// Counting the lines of an import that repeat an earlier line's key, at a size where the table has
// grown many times: the count must be exact.

import { KeySet } from '../../src/data/keyset';

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
