import { Readable } from 'node:stream';
import { importStream } from '../../src/data/import';
import { parseLine } from '../../src/data/parse';
import { SqliteStore } from '../../src/store/sqlite';

const car = {
  Description: 'TEST CAR',
  RegistrationYear: 2019,
  CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' },
  FuelType: 'Petrol',
  ImageUrl: 'x',
};
const line = (o: unknown) => JSON.stringify(o);
const ndjson = (...lines: string[]) => Readable.from([lines.join('\n') + '\n']);

describe('import: one line', () => {
  test('a vehicle record is keyed by operation, normalised registration and state', () => {
    const r = parseLine(line({ operation: 'CheckUSA', registration: '7abc 123', state: 'california', vehicle: car }));
    expect(r).toMatchObject({
      ok: true,
      delete: false,
      record: { operation: 'CheckUSA', registration: '7ABC123', state: 'CA', payload: JSON.stringify(car) },
    });
  });

  test.each([
    ['not json', '{oops', /not valid JSON/],
    ['no operation', line({ registration: 'A1', vehicle: car }), /"operation" is missing/],
    [
      'unknown operation',
      line({ operation: 'CheckMars', registration: 'A1', vehicle: car }),
      /unknown operation "CheckMars"/,
    ],
    ['no registration', line({ operation: 'Check', vehicle: car }), /"registration" must be a string/],
    [
      'overlong registration',
      line({ operation: 'Check', registration: 'A'.repeat(40), vehicle: car }),
      /longer than 32/,
    ],
    [
      'state missing',
      line({ operation: 'CheckUSA', registration: 'A1', vehicle: car }),
      /"state" is required for CheckUSA/,
    ],
    [
      'bad state',
      line({ operation: 'CheckCanada', registration: 'A1', state: 'Texas', vehicle: car }),
      /"state" is not a known subdivision/,
    ],
    [
      'state where none belongs',
      line({ operation: 'Check', registration: 'A1', state: 'CA', vehicle: car }),
      /only for CheckUSA/,
    ],
    [
      'vehicle not an object',
      line({ operation: 'Check', registration: 'A1', vehicle: 'car' }),
      /"vehicle" must be a JSON object/,
    ],
    ['no vehicle at all', line({ operation: 'Check', registration: 'A1' }), /^"vehicle" is missing/],
    ['no mot at all', line({ operation: 'UKMOT', registration: 'A1' }), /^"mot" is missing/],
    // The operation names are the WSDL's, spelt exactly; a name right but for case says which it meant.
    [
      'an operation in the wrong case',
      line({ operation: 'CheckUsa', registration: 'A1', state: 'TX', vehicle: car }),
      /^unknown operation "CheckUsa" \(names are case-sensitive here: did you mean "CheckUSA"\?\)$/,
    ],
    [
      'an operation with no near name',
      line({ operation: 'CheckMars', registration: 'A1', vehicle: car }),
      /^unknown operation "CheckMars"$/,
    ],
    [
      'integer field not an integer',
      line({ operation: 'Check', registration: 'A1', vehicle: { RegistrationYear: 'nineteen' } }),
      /RegistrationYear must be an integer/,
    ],
    [
      'composite with a stray key',
      line({ operation: 'Check', registration: 'A1', vehicle: { CarMake: { Text: 'FORD' } } }),
      /unknown key "Text"/,
    ],
    [
      'CurrentValue not an integer',
      line({ operation: 'Check', registration: 'A1', vehicle: { FuelType: { CurrentValue: 'x' } } }),
      /CurrentValue must be an integer or null/,
    ],
    [
      'a character XML cannot carry',
      line({ operation: 'Check', registration: 'A1', vehicle: { Description: 'bad\u0001' } }),
      /XML cannot carry/,
    ],
    [
      'mot on a vehicle operation',
      line({ operation: 'Check', registration: 'A1', mot: {} }),
      /holds "vehicle", not "mot"/,
    ],
    [
      'tests not an array',
      line({ operation: 'UKMOT', registration: 'A1', mot: { tests: {} } }),
      /mot.tests must be an array/,
    ],
    [
      'failure reasons not strings',
      line({ operation: 'UKMOT', registration: 'A1', mot: { tests: [{ FailureReasons: [1, {}] }] } }),
      /FailureReasons\[1\]/,
    ],
    [
      'extended information not rows',
      line({ operation: 'UKMOT', registration: 'A1', mot: { extendedInformation: ['Colour'] } }),
      /extendedInformation\[0\] must be an array/,
    ],
  ])('refuses %s, saying why', (_name, text, reason) => {
    const r = parseLine(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });
});

describe('import: the stored body', () => {
  const payloadOf = (text: string) => {
    const r = parseLine(text);
    if (!r.ok || r.delete) throw new Error(`not a put: ${JSON.stringify(r)}`);
    return r.record.payload;
  };

  test('a line laid out as export writes it keeps its body byte for byte (number forms, escapes)', () => {
    const body =
      '{"Description":"A \\"quoted\\" \\/ name\\n","EngineSize":{"CurrentValue":1598,"CurrentTextValue":"1.60"},"Price":1.50}';
    expect(payloadOf(`{"operation":"Check","registration":"AB12CDE","vehicle":${body}}`)).toBe(body);
    const state = '{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":{"Description":"X"}}';
    expect(payloadOf(state)).toBe('{"Description":"X"}');
    const mot = '{"operation":"UKMOT","registration":"AB12CDE","mot":{"make":"FORD","tests":[]}}';
    expect(payloadOf(mot)).toBe('{"make":"FORD","tests":[]}');
  });

  test('any other layout stores the body as JSON.stringify writes it', () => {
    expect(payloadOf('{"registration":"AB12CDE","operation":"Check","vehicle":{"Description":"X"}}')).toBe(
      '{"Description":"X"}',
    );
    expect(payloadOf('{"operation":"Check", "registration":"AB12CDE", "vehicle": { "Description" : "X" } }')).toBe(
      '{"Description":"X"}',
    );
    expect(payloadOf('{"operation":"Check","registration":"ab12cde","vehicle":{"Description":"\\u0058"}}')).toBe(
      '{"Description":"X"}',
    );
  });

  test('a repeated top-level key stores what JSON.parse keeps (the last), as valid JSON', () => {
    const twice =
      '{"operation":"Check","registration":"AB12CDE","vehicle":{"Description":"FIRST"},"vehicle":{"Description":"LAST"}}';
    expect(JSON.parse(payloadOf(twice))).toEqual({ Description: 'LAST' });
    const escaped =
      '{"operation":"Check","registration":"AB12CDE","vehicle":{"Description":"FIRST"},"veh\\u0069cle":{"Description":"LAST"}}';
    expect(JSON.parse(payloadOf(escaped))).toEqual({ Description: 'LAST' });
    const stateAfter =
      '{"operation":"CheckUSA","registration":"A1","state":"CA","vehicle":{"Description":"X"},"state":"NY"}';
    const r = parseLine(stateAfter);
    expect(r).toMatchObject({ ok: true, record: { state: 'NY' } });
    if (r.ok && !r.delete) expect(JSON.parse(r.record.payload)).toEqual({ Description: 'X' });
  });

  test.each([
    ['\\b', '{"operation":"Check","registration":"A1","vehicle":{"Description":"a\\bb"}}'],
    ['\\f', '{"operation":"Check","registration":"A1","vehicle":{"CarMake":{"CurrentTextValue":"a\\fb"}}}'],
    ['\\u0001', '{"operation":"UKMOT","registration":"A1","mot":{"tests":[{"Advisories":["a\\u0001b"]}]}}'],
    ['\\uffff', '{"operation":"UKMOT","registration":"A1","mot":{"extendedInformation":[["\\uffff"]]}}'],
    ['a lone surrogate', '{"operation":"Check","registration":"A1","vehicle":{"CarModel":"\\ud800"}}'],
  ])('a character XML cannot carry, written as %s, is refused in every kind of value', (_name, text) => {
    const r = parseLine(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/XML cannot carry/);
  });

  test('a value over 8,192 characters is refused, in a vehicle and in an MOT history', () => {
    for (const text of [
      line({ operation: 'Check', registration: 'A1', vehicle: { Description: 'x'.repeat(8193) } }),
      line({ operation: 'UKMOT', registration: 'A1', mot: { make: 'x'.repeat(8193) } }),
    ]) {
      const r = parseLine(text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/longer than 8192 characters/);
    }
    expect(
      parseLine(line({ operation: 'Check', registration: 'A1', vehicle: { Description: 'x'.repeat(8192) } })).ok,
    ).toBe(true);
  });
});

describe('import: reading the bytes', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());
  const rec = (reg: string, d = 'X') => line({ operation: 'Check', registration: reg, vehicle: { Description: d } });

  test('a BOM, CRLF line ends, blank lines and a last line without a line break', async () => {
    const text = '\ufeff' + rec('B1') + '\r\n\r\n' + rec('B2') + '\n   \n' + rec('B3');
    const report = await importStream(store, Readable.from([Buffer.from(text, 'utf8')]));
    expect(report).toMatchObject({ committed: true, lines: 5, imported: 3 });
    expect((await store.get({ operation: 'Check', registration: 'B1', state: '' }))?.payload).toBe(
      '{"Description":"X"}',
    );
    expect((await store.get({ operation: 'Check', registration: 'B3', state: '' }))?.payload).toBe(
      '{"Description":"X"}',
    );
  });

  test('a multi-byte character cut between two reads, and reads of one byte each', async () => {
    const text = rec('M1', 'caf\u00e9 \u4eac \u{1F697}') + '\n' + rec('M2', '\u00e9') + '\n';
    const bytes = Buffer.from(text, 'utf8');
    const ones = Array.from(bytes, (b) => Buffer.from([b]));
    for (const chunks of [[bytes.subarray(0, 60), bytes.subarray(60)], ones]) {
      const report = await importStream(store, Readable.from(chunks));
      expect(report).toMatchObject({ committed: true, imported: 2, errors: [] });
      expect(JSON.parse((await store.get({ operation: 'Check', registration: 'M1', state: '' }))!.payload)).toEqual({
        Description: 'caf\u00e9 \u4eac \u{1F697}',
      });
    }
  });

  test('line numbers count across runs of the file, and a line too long to read is reported by its number', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => rec(`N${i}`, 'y'.repeat(400)));
    many[2500] = '{"operation":"Nope"}';
    const big = await importStream(store, Readable.from([many.join('\n') + '\n']), { workers: 1 });
    expect(big.committed).toBe(false);
    expect(big.errors).toEqual([{ line: 2501, reason: expect.stringMatching(/unknown operation "Nope"/) }]);

    const huge = 'z'.repeat(5 * 1024 * 1024);
    const withHuge = Buffer.from([rec('H1'), huge, rec('H2'), '{"operation":"Nope"}'].join('\n') + '\n');
    // Read whole, and in reads of 64 KiB (as a file or a pipe gives them): the long line is never held whole.
    const pieces = Array.from({ length: Math.ceil(withHuge.length / 65536) }, (_, i) =>
      withHuge.subarray(i * 65536, (i + 1) * 65536),
    );
    for (const chunks of [[withHuge], pieces]) {
      const report = await importStream(store, Readable.from(chunks));
      expect(report.committed).toBe(false);
      expect(report.lines).toBe(4);
      expect(report.errors.map((e) => e.line)).toEqual([2, 4]);
      expect(report.errors[0].reason).toMatch(/line is longer than/);
    }
    expect(await store.isEmpty()).toBe(true);
  });

  test('with and without worker threads, a file gives the same store and report', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) =>
      i % 7 === 3
        ? line({ operation: 'Check', registration: `W${i - 1}`, delete: true })
        : rec(`W${i % 1500}`, `v${i}`),
    );
    const text = lines.join('\n') + '\n';
    const other = new SqliteStore(':memory:');
    const a = await importStream(store, Readable.from([text]), { workers: 0 });
    const b = await importStream(other, Readable.from([text]), { workers: 2 });
    expect(b).toEqual(a);
    expect(a).toMatchObject({ committed: true, deleted: 286 });
    expect(a.repeated).toBeGreaterThan(0);
    const all = async (s: SqliteStore) => {
      const out: unknown[] = [];
      for await (const r of s.records()) out.push(r);
      return out;
    };
    expect(await all(other)).toEqual(await all(store));
    await other.close();
  });
});

describe('import: a file', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('a valid file is written, counted per operation, and replaces records with the same key', async () => {
    const report = await importStream(
      store,
      ndjson(
        line({ operation: 'Check', registration: 'AB12 CDE', vehicle: car }),
        '',
        line({ operation: 'UKMOT', registration: 'AB12CDE', mot: { make: 'FORD', tests: [] } }),
        line({ operation: 'Check', registration: 'ab-12-cde', vehicle: { ...car, Description: 'REPLACED' } }),
      ),
    );
    expect(report).toMatchObject({ committed: true, imported: 3, invalid: 0, byOperation: { Check: 2, UKMOT: 1 } });
    expect(await store.count()).toBe(2);
    const found = await store.get({ operation: 'Check', registration: 'AB12CDE', state: '' });
    expect(JSON.parse(found!.payload).Description).toBe('REPLACED');
  });

  test('one invalid line anywhere imports nothing, and every bad line is reported by number', async () => {
    await importStream(store, ndjson(line({ operation: 'Check', registration: 'KEEP1', vehicle: car })));
    const report = await importStream(
      store,
      ndjson(
        line({ operation: 'Check', registration: 'NEW1', vehicle: car }),
        line({ operation: 'Check', registration: 'KEEP1', vehicle: { ...car, Description: 'OVERWRITTEN' } }),
        '{broken',
        line({ operation: 'CheckUSA', registration: 'X', vehicle: car }),
      ),
    );
    expect(report.committed).toBe(false);
    expect(report.errors.map((e) => e.line)).toEqual([3, 4]);
    expect(await store.count()).toBe(1);
    expect(await store.get({ operation: 'Check', registration: 'NEW1', state: '' })).toBeNull();
    expect(
      JSON.parse((await store.get({ operation: 'Check', registration: 'KEEP1', state: '' }))!.payload).Description,
    ).toBe('TEST CAR');
  });
});

describe('import: a byte-order mark', () => {
  test('only at the very start of the file is it dropped; anywhere else the line is refused, wherever the reads fall', async () => {
    const line1 = Buffer.from('{"operation":"Check","registration":"F1","vehicle":{}}\n');
    const line2 = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"operation":"Check","registration":"F2","vehicle":{}}\n'),
    ]);
    const whole = Buffer.concat([line1, line2]);
    for (const chunks of [
      [whole],
      [line1, line2],
      [whole.subarray(0, line1.length + 1), whole.subarray(line1.length + 1)],
    ]) {
      const store = new SqliteStore(':memory:');
      const report = await importStream(store, Readable.from(chunks));
      expect(report.committed).toBe(false);
      expect(report.errors).toEqual([{ line: 2, reason: expect.stringMatching(/not valid JSON/) }]);
      await store.close();
    }
    const store = new SqliteStore(':memory:');
    expect(
      await importStream(store, Readable.from([Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), line1])])),
    ).toMatchObject({ committed: true, imported: 1 });
    await store.close();
  });
});
