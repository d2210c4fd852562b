// The LookupError a synchronous call throws (a test fails if it throws something else, or nothing).

import { LookupError } from '../../src/service/errors';

export function refused(f: () => unknown): LookupError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LookupError);
    return e as LookupError;
  }
  throw new Error('nothing was thrown');
}
