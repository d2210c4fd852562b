// What a username may be, as the README's "Managing callers" states it: "not empty, at most 256
// characters, no control characters, no leading or trailing spaces"; and `add --generate` prints a
// new unguessable username of 128 random bits. A new username (issue 45, point 4) also refuses the
// characters that make two usernames look the same: bidirectional controls (U+202A-202E,
// U+2066-2069, U+200E/F), zero-width ones (U+200B-200D, U+2060, U+FEFF) and other invisible or
// format characters; existing ones holding them are shown escaped.

import {
  escapeInvisible,
  generateUsername,
  invisibleIn,
  newUsernameProblem,
  usernameProblem,
} from '../../src/accounts/username';

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

describe('newUsernameProblem', () => {
  const INVISIBLE: [string, string][] = [
    ['\u202a', 'U+202A'],
    ['\u202b', 'U+202B'],
    ['\u202c', 'U+202C'],
    ['\u202d', 'U+202D'],
    ['\u202e', 'U+202E'],
    ['\u2066', 'U+2066'],
    ['\u2067', 'U+2067'],
    ['\u2068', 'U+2068'],
    ['\u2069', 'U+2069'],
    ['\u200e', 'U+200E'],
    ['\u200f', 'U+200F'],
    ['\u200b', 'U+200B'],
    ['\u200c', 'U+200C'],
    ['\u200d', 'U+200D'],
    ['\u2060', 'U+2060'],
    ['\ufeff', 'U+FEFF'],
    // Other format characters: soft hyphen, Arabic letter mark, invisible times, a tag character.
    ['\u00ad', 'U+00AD'],
    ['\u061c', 'U+061C'],
    ['\u2062', 'U+2062'],
    ['\u{E0041}', 'U+E0041'],
    // Blank-looking: a Hangul filler, a no-break space; and a lone surrogate.
    ['\u3164', 'U+3164'],
    ['\u00a0', 'U+00A0'],
    ['\ud800', 'U+D800'],
  ];

  test.each(INVISIBLE)('%j is refused, the reason naming it', (c, code) => {
    const problem = newUsernameProblem(`me${c}ter`);
    expect(problem).toMatch(/invisible or formatting characters/);
    expect(problem).toContain(code);
    expect(invisibleIn(`me${c}ter`)).toBe(code);
  });

  test('control characters keep their own reason', () => {
    expect(newUsernameProblem('a\tb')).toMatch(/control characters/);
  });

  test('what a username may otherwise be is still accepted', () => {
    for (const name of [
      'alice',
      'bob.smith@example.com',
      'a b',
      'Ünïcödé',
      '\u{1F697}',
      'Ελένη',
      '山田',
      generateUsername(),
    ])
      expect(newUsernameProblem(name)).toBeNull();
  });

  test('an existing username that holds them is still one a lookup can send (kept, and listed as suspicious)', () => {
    expect(usernameProblem('me\u200bter')).toBeNull();
  });
});

describe('escapeInvisible', () => {
  test('writes each invisible character as \\u{XXXX}, so that look-alikes can be told apart', () => {
    expect(escapeInvisible('me\u200bter')).toBe('me\\u{200B}ter');
    expect(escapeInvisible('\u202eabc\u202c')).toBe('\\u{202E}abc\\u{202C}');
    expect(escapeInvisible('meter')).toBe('meter');
    // A backslash of the name itself is doubled: "me\\u{200B}ter" typed as such is not the one above.
    expect(escapeInvisible('me\\u{200B}ter')).toBe('me\\\\u{200B}ter');
  });
});
