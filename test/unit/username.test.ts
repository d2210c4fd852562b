// What a username may be, as the README's "Managing callers" states it: "not empty, at most 256
// characters, no control characters, no leading or trailing spaces"; and `add --generate` prints a
// new unguessable username of 128 random bits.

import { generateUsername, usernameProblem } from '../../src/accounts/username';

describe('usernameProblem', () => {
  test('ordinary names are accepted', () => {
    for (const name of ['alice', 'bob.smith@example.com', 'a b', 'Ünïcödé', '0', '-'])
      expect(usernameProblem(name)).toBeNull();
  });

  test('empty is refused, and the reason says so', () => {
    expect(usernameProblem('')).toMatch(/empty/);
  });

  test('leading or trailing spaces are refused, and the reason says so', () => {
    for (const name of [' alice', 'alice ', ' ', '\talice']) expect(usernameProblem(name)).toMatch(/spaces/);
  });

  test('256 characters is the most, counted in characters (code points), not UTF-16 units', () => {
    expect(usernameProblem('a'.repeat(256))).toBeNull();
    expect(usernameProblem('a'.repeat(257))).toMatch(/at most 256 characters/);
    // 256 emoji are 512 UTF-16 units but 256 characters.
    expect(usernameProblem('\u{1F697}'.repeat(256))).toBeNull();
    expect(usernameProblem('\u{1F697}'.repeat(257))).toMatch(/at most 256 characters/);
  });

  test('control characters are refused, and the reason says so', () => {
    for (const name of ['a\tb', 'a\nb', 'a\u0000b', 'a\u007fb', 'a\u0085b', 'a\u2028b'])
      expect(usernameProblem(name)).toMatch(/control characters/);
  });
});

describe('generateUsername', () => {
  test('128 random bits in hex: 32 hex digits, different each time', () => {
    const names = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const n = generateUsername();
      expect(n).toMatch(/^[0-9a-f]{32}$/);
      expect(usernameProblem(n)).toBeNull();
      names.add(n);
    }
    expect(names.size).toBe(50);
  });
});
