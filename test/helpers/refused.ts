// What a synchronous call throws (a test fails if it throws nothing), and the LookupError of a
// refused lookup (a test fails if it throws something else).

import { LookupError } from '../../src/service/errors';

export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('nothing was thrown');
}

export function refused(f: () => unknown): LookupError {
  const e = thrown(f);
  expect(e).toBeInstanceOf(LookupError);
  return e as LookupError;
}
