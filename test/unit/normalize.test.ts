import { normalizeRegistration, normalizeState } from '../../src/service/normalize';

const reg = (s: string) => {
  const r = normalizeRegistration(s);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

describe('registration normalisation', () => {
  test.each([
    ['ab12 cde', 'AB12CDE'],
    ['AB-12-CDE', 'AB12CDE'],
    ['ab.12.cde', 'AB12CDE'],
    ['AB·12·CDE', 'AB12CDE'],
    ['  a b 1 2  ', 'AB12'],
    ['７ＡＢＣ１２３', '7ABC123'],
  ])('%j -> %j', (input, expected) => expect(reg(input)).toBe(expected));

  test('Cyrillic look-alikes fold to Latin in both cases, so a Ukrainian plate typed either way matches', () => {
    // АА1234ВС typed in Cyrillic, and the same in Latin
    expect(reg('АА1234ВС')).toBe(reg('AA1234BC'));
    expect(reg('аа 1234 вс')).toBe('AA1234BC');
    expect(reg('КХ 5555 ТМ')).toBe('KX5555TM');
    expect(reg('Ерсоу')).toBe('EPCOY');
  });

  test('other scripts are kept as they are', () => {
    expect(reg('京A·12345')).toBe('京A12345');
    expect(reg('ДЖ 123')).toBe('ДЖ123'); // Д and Ж have no Latin twin
  });

  test('refuses empty, overlong and control-character plates with a reason', () => {
    expect(normalizeRegistration('- . -')).toEqual({ ok: false, reason: 'holds no letters or digits' });
    expect(normalizeRegistration('A'.repeat(33)).ok).toBe(false);
    expect(normalizeRegistration('A'.repeat(32)).ok).toBe(true);
    expect(normalizeRegistration('AB\u000012').ok).toBe(false);
    expect(normalizeRegistration('AB\t12').ok).toBe(false);
  });

  test('SQL metacharacters are kept literally', () => {
    expect(reg("' OR 1=1 --")).toBe("'OR1=1");
  });
});

describe('state normalisation', () => {
  test.each([
    ['US', 'CA', 'CA'],
    ['US', 'california', 'CA'],
    ['US', 'New York', 'NY'],
    ['US', ' new  york ', 'NY'],
    ['CA', 'ON', 'ON'],
    ['CA', 'Ontario', 'ON'],
    ['CA', 'québec', 'QC'],
    ['AU', 'NSW', 'NSW'],
    ['AU', 'new south wales', 'NSW'],
    ['AU', 'N.S.W.', 'NSW'],
  ] as const)('%s %j -> %s', (country, input, expected) => {
    expect(normalizeState(country, input)).toEqual({ ok: true, value: expected });
  });

  // README: "Registrations and states are normalised the same way at import and at lookup: case,
  // spaces, hyphens, dots and middle dots are ignored, Cyrillic letters that look like Latin ones fold
  // to Latin, and states are given as the postal abbreviation or the full name."
  test.each([
    ['US', 'NewYork', 'NY'],
    ['US', 'new-york', 'NY'],
    ['US', 'NEW\u00b7YORK', 'NY'],
    ['US', 'N Y', 'NY'],
    ['US', 'N-Y', 'NY'],
    ['CA', 'Nova-Scotia', 'NS'],
    ['CA', 'britishcolumbia', 'BC'],
    ['AU', 'N-S-W', 'NSW'],
    ['AU', 'WesternAustralia', 'WA'],
    // Cyrillic С and А (U+0421, U+0410) typed for CA; Cyrillic Т and Х for TX.
    ['US', '\u0421\u0410', 'CA'],
    ['US', '\u0422\u0425', 'TX'],
  ] as const)(
    'spaces, hyphens and middle dots ignored, Cyrillic look-alikes folded: %s %j -> %s',
    (country, input, expected) => {
      expect(normalizeState(country, input)).toEqual({ ok: true, value: expected });
    },
  );

  test('anything else is refused, naming the accepted forms', () => {
    const r = normalizeState('US', 'Narnia');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/postal abbreviation or the full name/);
    expect(normalizeState('AU', 'ON').ok).toBe(false);
    expect(normalizeState('CA', 'NSW').ok).toBe(false);
  });
});

describe('the README limit: a registration over 32 characters is refused', () => {
  test('32 characters outside the BMP (two UTF-16 units each) are 32 characters, and pass', () => {
    // U+1D400 MATHEMATICAL BOLD CAPITAL A folds to A under NFKC
    expect(normalizeRegistration('\u{1D400}'.repeat(32))).toEqual({ ok: true, value: 'A'.repeat(32) });
  });

  test('33 are refused, and the reason names the limit', () => {
    for (const raw of ['A'.repeat(33), '\u{1D400}'.repeat(33)]) {
      const r = normalizeRegistration(raw);
      expect(r).toEqual({ ok: false, reason: expect.stringContaining('32 characters') });
    }
  });

  test('a lone surrogate counts as a control character; a whole pair does not', () => {
    expect(normalizeRegistration('AB\ud83d12').ok).toBe(false);
    expect(normalizeRegistration('AB\ude9712').ok).toBe(false);
    expect(normalizeRegistration('AB\ufffe').ok).toBe(false);
    expect(normalizeRegistration('AB\u2028').ok).toBe(false);
    expect(normalizeRegistration('AB\u0085').ok).toBe(false);
    expect(normalizeRegistration('AB\u007f').ok).toBe(false);
    // README, Errors: INVALID_PARAMETER for control characters; the reason says which rule it broke
    expect(normalizeRegistration('AB\u0000')).toEqual({
      ok: false,
      reason: expect.stringContaining('control characters'),
    });
    expect(normalizeRegistration('AB🚗12').ok).toBe(true);
  });

  test('dashes of every width and the katakana middle dot are separators too', () => {
    expect(reg('AB\u201012\u2013CD\u2014EF\u2015GH')).toBe('AB12CDEFGH');
    expect(reg('AB\u30fb12\u2022CD')).toBe('AB12CD');
  });
});

// Written by hand from the postal authorities' lists (USPS, Canada Post, Australia Post), not from
// the code: every subdivision by its abbreviation and by its full name, in the forms the README's
// "postal abbreviation or the full name" allows.
const SUBDIVISIONS = {
  US:
    'AL Alabama|AK Alaska|AZ Arizona|AR Arkansas|CA California|CO Colorado|CT Connecticut|DE Delaware|' +
    'FL Florida|GA Georgia|HI Hawaii|ID Idaho|IL Illinois|IN Indiana|IA Iowa|KS Kansas|KY Kentucky|LA Louisiana|' +
    'ME Maine|MD Maryland|MA Massachusetts|MI Michigan|MN Minnesota|MS Mississippi|MO Missouri|MT Montana|' +
    'NE Nebraska|NV Nevada|NH New Hampshire|NJ New Jersey|NM New Mexico|NY New York|NC North Carolina|' +
    'ND North Dakota|OH Ohio|OK Oklahoma|OR Oregon|PA Pennsylvania|RI Rhode Island|SC South Carolina|' +
    'SD South Dakota|TN Tennessee|TX Texas|UT Utah|VT Vermont|VA Virginia|WA Washington|WV West Virginia|' +
    'WI Wisconsin|WY Wyoming|DC District of Columbia|PR Puerto Rico|GU Guam|VI U.S. Virgin Islands|' +
    'VI Virgin Islands|AS American Samoa|MP Northern Mariana Islands',
  CA:
    'AB Alberta|BC British Columbia|MB Manitoba|NB New Brunswick|NL Newfoundland and Labrador|NS Nova Scotia|' +
    'NT Northwest Territories|NU Nunavut|ON Ontario|PE Prince Edward Island|QC Quebec|SK Saskatchewan|YT Yukon',
  AU:
    'NSW New South Wales|VIC Victoria|QLD Queensland|WA Western Australia|SA South Australia|TAS Tasmania|' +
    'ACT Australian Capital Territory|NT Northern Territory',
} as const;

describe('every subdivision, by abbreviation and by full name', () => {
  const cases = (Object.keys(SUBDIVISIONS) as (keyof typeof SUBDIVISIONS)[]).flatMap((country) =>
    SUBDIVISIONS[country].split('|').map((entry) => {
      const [abbr, ...name] = entry.split(' ');
      return [country, abbr, name.join(' ')] as const;
    }),
  );

  test.each(cases)('%s %s = %s', (country, abbr, name) => {
    expect(normalizeState(country, abbr)).toEqual({ ok: true, value: abbr });
    expect(normalizeState(country, abbr.toLowerCase())).toEqual({ ok: true, value: abbr });
    expect(normalizeState(country, name)).toEqual({ ok: true, value: abbr });
    expect(normalizeState(country, name.toUpperCase())).toEqual({ ok: true, value: abbr });
  });

  test('the refusal gives examples that are themselves accepted: an abbreviation and its full name', () => {
    for (const country of ['US', 'CA', 'AU'] as const) {
      const r = normalizeState(country, 'Atlantis');
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      const examples = /e\.g\. (.*)\)$/.exec(r.reason)?.[1] ?? '';
      const pairs = examples.split(', ').map((p) => p.split(' or '));
      // Two examples, not the whole list: the refusal stays a short line for the caller.
      expect(pairs.length).toBe(2);
      for (const [abbr, name] of pairs) {
        expect(normalizeState(country, abbr)).toEqual({ ok: true, value: abbr });
        expect(normalizeState(country, name)).toEqual({ ok: true, value: abbr });
        expect(name.length).toBeGreaterThan(abbr.length);
      }
    }
  });
});
