// quote() is what every error message uses to repeat a caller's value back (an unknown operation,
// a bad state): its contract, "bounded, printable, one line", checked on hand-written values.

import { asLookupError, LookupError, quote } from '../../src/service/errors';

describe('quote: a caller value safe to repeat inside an error message', () => {
  test('a short value is repeated as it is, in single quotes', () => {
    expect(quote('Narnia')).toBe("'Narnia'");
    expect(quote('')).toBe("''");
  });

  test('40 characters are kept whole; from the 41st the value is cut at 40 and marked with …', () => {
    const forty = 'ABCDEFGHIJ'.repeat(4);
    expect(quote(forty)).toBe(`'${forty}'`);
    expect(quote(`${forty}K`)).toBe(`'${forty}…'`);
    expect(quote('x'.repeat(5000))).toBe(`'${'x'.repeat(40)}…'`);
  });

  test('the bound counts characters, not UTF-16 units: an emoji is one, and is never split', () => {
    const cars = '🚗'.repeat(40);
    expect(quote(cars)).toBe(`'${cars}'`);
    expect(quote(`${cars}🚗`)).toBe(`'${cars}…'`);
  });

  test('a caller-chosen bound', () => {
    expect(quote('ABCDEF', 3)).toBe("'ABC…'");
    expect(quote('ABC', 3)).toBe("'ABC'");
  });

  test('control characters (C0, DEL, C1, U+2028, U+2029) become ?, so the message stays one printable line', () => {
    expect(quote('a\nb\rc\td\u0000e')).toBe("'a?b?c?d?e'");
    expect(quote('a\u007fb\u0085c\u009fd')).toBe("'a?b?c?d'");
    expect(quote('a\u2028b\u2029c')).toBe("'a?b?c'");
    // the characters just outside those ranges are printable and kept
    expect(quote(' ~\u00a0é')).toBe("' ~\u00a0é'");
  });
});

describe('errors as values', () => {
  test('a LookupError keeps its code, message and Retry-After, and is named for logs', () => {
    const e = new LookupError('RATE_LIMITED', 'slow down', 7);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('LookupError');
    expect(e.code).toBe('RATE_LIMITED');
    expect(e.message).toBe('slow down');
    expect(e.retryAfter).toBe(7);
    expect(new LookupError('VEHICLE_NOT_FOUND', 'none').retryAfter).toBeUndefined();
  });

  test('a LookupError passes through asLookupError unchanged', () => {
    const e = new LookupError('VEHICLE_NOT_FOUND', 'No vehicle found');
    expect(asLookupError(e)).toBe(e);
  });

  test('anything else becomes INTERNAL_ERROR and carries none of its detail (README, Errors)', () => {
    for (const thrown of [new Error('SQLITE_CORRUPT at /var/lib/secret.db'), 'a string', undefined]) {
      const e = asLookupError(thrown);
      expect(e.code).toBe('INTERNAL_ERROR');
      expect(e.message).not.toMatch(/SQLITE|secret|string/);
      expect(e.message).not.toBe('');
    }
  });
});
