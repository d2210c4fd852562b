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

  test('anything else is refused, naming the accepted forms', () => {
    const r = normalizeState('US', 'Narnia');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/postal abbreviation or the full name/);
    expect(normalizeState('AU', 'ON').ok).toBe(false);
    expect(normalizeState('CA', 'NSW').ok).toBe(false);
  });
});
