// The import at its edges, each case a hand-written file and what the README's "Importing your own
// vehicles", "Full refresh", "Export" and "Backup and restore" say must come of it: how the bytes
// are read (a BOM, reads cut anywhere, a line too long to read), what the report counts, what the
// store is told (a key's first put, the operations --replace names), the refusals' reasons, and
// which layouts keep the body's text.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { BackupError, backupStore } from '../../src/data/backup';
import { exportLine, exportRecords } from '../../src/data/export';
import { importFile, importStream, type ImportOptions } from '../../src/data/import';
import { parseLine } from '../../src/data/parse';
import { KeySet } from '../../src/data/keyset';
import { chunkRunner } from '../../src/data/workers';
import { metrics } from '../../src/ops/metrics';
import { SqliteStore } from '../../src/store/sqlite';
import type { ImportBatch, RecordKey, StoredRecord, VehicleStore } from '../../src/store/store';

const rec = (reg: string, d = 'X') => `{"operation":"Check","registration":"${reg}","vehicle":{"Description":"${d}"}}`;
const utf8 = (s: string) => Buffer.from(s, 'utf8');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

async function importInto(store: VehicleStore, chunks: (Buffer | string)[], options: ImportOptions = {}) {
  return importStream(store, Readable.from(chunks), options);
}

describe('reading the bytes', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());
  const stored = async (reg: string) =>
    (await store.get({ operation: 'Check', registration: reg, state: '' }))?.payload ?? null;

  test('a BOM that is a read of its own, or that follows an empty read, is dropped', async () => {
    for (const chunks of [
      [BOM, utf8(rec('B1') + '\n')],
      [Buffer.alloc(0), Buffer.concat([BOM, utf8(rec('B1') + '\n')])],
    ]) {
      const report = await importInto(store, chunks);
      expect(report).toMatchObject({ committed: true, lines: 1, imported: 1, errors: [] });
      expect(await stored('B1')).toBe('{"Description":"X"}');
    }
  });

  test('the reads add up: onBytes is told the bytes read so far, BOM included', async () => {
    const seen: number[] = [];
    const a = Buffer.concat([BOM, utf8(rec('C1') + '\n' + rec('C2').slice(0, 10))]);
    const b = utf8(rec('C2').slice(10) + '\n');
    const report = await importInto(store, [a, b], { onBytes: (n) => seen.push(n) });
    expect(report).toMatchObject({ committed: true, lines: 2, imported: 2 });
    expect(seen).toEqual([a.length, a.length + b.length]);
    expect(await stored('C2')).toBe('{"Description":"X"}');
  });

  test('an empty file is an import of nothing, committed', async () => {
    expect(await importInto(store, [])).toMatchObject({ committed: true, lines: 0, imported: 0, invalid: 0 });
    expect(await importInto(store, [BOM])).toMatchObject({ committed: true, lines: 0, imported: 0, invalid: 0 });
  });

  test('a line too long to read, as the last line without a line break, is reported by its number', async () => {
    const huge = 'z'.repeat(5 * 1024 * 1024);
    for (const chunks of [[rec('L1') + '\n' + huge], [rec('L1') + '\n', huge.slice(0, 3 << 20), huge.slice(3 << 20)]]) {
      const report = await importInto(store, chunks);
      expect(report.committed).toBe(false);
      expect(report.lines).toBe(2);
      expect(report.errors).toEqual([{ line: 2, reason: expect.stringMatching(/line is longer than/) }]);
    }
  });

  test('a line too long to read whose line break starts the next read: the lines after it are read whole', async () => {
    const huge = 'z'.repeat(5 * 1024 * 1024);
    const report = await importInto(store, [
      rec('L1') + '\n' + huge.slice(0, 1 << 20),
      huge.slice(1 << 20),
      '\n' + rec('L2') + '\n{"operation":"Nope"}\n',
    ]);
    expect(report.lines).toBe(4);
    expect(report.errors).toEqual([
      { line: 2, reason: expect.stringMatching(/line is longer than/) },
      { line: 4, reason: expect.stringMatching(/unknown operation "Nope"/) },
    ]);
  });

  test('CRLF line ends: a line laid out as export writes it still keeps its body byte for byte (README)', async () => {
    const report = await importInto(store, [
      '{"operation":"Check","registration":"CR1","vehicle":{"Price":1.50}}\r\n{"operation":"Check","registration":"CR2","vehicle":{"Price":2.50}}\r\n',
    ]);
    expect(report).toMatchObject({ committed: true, lines: 2, imported: 2 });
    expect(await stored('CR1')).toBe('{"Price":1.50}');
    expect(await stored('CR2')).toBe('{"Price":2.50}');
  });

  test('a line of exactly 4 MiB read in pieces is not "longer than 4194304 bytes" (it is refused only as text too long)', async () => {
    const line = 'w'.repeat(4 * 1024 * 1024);
    const report = await importInto(store, [
      rec('X1') + '\n' + line.slice(0, 100),
      line.slice(100),
      '\n' + rec('X2') + '\n',
    ]);
    expect(report.lines).toBe(3);
    expect(report.errors).toEqual([{ line: 2, reason: expect.stringMatching(/characters/) }]);
    const over = await importInto(store, [
      rec('X1') + '\n' + line.slice(0, 100),
      line.slice(100) + 'w',
      '\n' + rec('X2') + '\n',
    ]);
    expect(over.errors).toEqual([{ line: 2, reason: 'line is longer than 4194304 bytes' }]);
  });

  test('a line of 3 MiB read in pieces is read as one line (and refused as JSON text too long, not as unreadable)', async () => {
    const long = `{"operation":"Check","registration":"A1","vehicle":{"Description":"${'y'.repeat(3 << 20)}"}}`;
    const pieces = [
      rec('P1') + '\n' + long.slice(0, 1000),
      long.slice(1000, 2 << 20),
      long.slice(2 << 20) + '\n' + rec('P2') + '\n',
    ];
    const report = await importInto(store, pieces);
    expect(report.lines).toBe(3);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0].line).toBe(2);
    expect(report.errors[0].reason).toMatch(/characters/);
  });
});

describe('a file', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-file-'));
    store = new SqliteStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a file of several MB, its lines cut across reads anywhere: every record whole', async () => {
    const file = path.join(dir, 'big.ndjson');
    // Lines of differing lengths (none a divisor of a read), so that reads end inside lines.
    const lines = Array.from({ length: 9000 }, (_, i) => rec(`F${i}`, `${i}:${'d'.repeat(100 + (i % 397))}`));
    fs.writeFileSync(file, '\ufeff' + lines.join('\n') + '\n');
    expect(fs.statSync(file).size).toBeGreaterThan(3 * 1024 * 1024);
    const seen: number[] = [];
    const report = await importFile(store, file, { onBytes: (n) => seen.push(n) });
    expect(report).toMatchObject({ committed: true, lines: 9000, imported: 9000, errors: [] });
    expect(seen[seen.length - 1]).toBe(fs.statSync(file).size);
    for (const i of [0, 1, 2047, 2048, 4095, 6000, 8999]) {
      const r = await store.get({ operation: 'Check', registration: `F${i}`, state: '' });
      expect(JSON.parse(r!.payload)).toEqual({ Description: `${i}:${'d'.repeat(100 + (i % 397))}` });
    }
  });

  test('an empty file imports nothing; a missing file fails before anything is written', async () => {
    const empty = path.join(dir, 'empty.ndjson');
    fs.writeFileSync(empty, '');
    expect(await importFile(store, empty)).toMatchObject({ committed: true, lines: 0, imported: 0 });
    await expect(importFile(store, path.join(dir, 'missing.ndjson'))).rejects.toThrow(/ENOENT/);
  });
});

describe('the report', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('a committed import, counted in full', async () => {
    const report = await importInto(store, [
      [
        rec('R1'),
        '',
        '{"operation":"UKMOT","registration":"M1","mot":{"make":"FORD"}}',
        rec('r-1', 'AGAIN'),
        '{"operation":"Check","registration":"GONE","delete":true}',
        rec('R2'),
      ].join('\n') + '\n',
    ]);
    expect(report).toEqual({
      lines: 6,
      imported: 4,
      deleted: 1,
      repeated: 1,
      byOperation: { Check: 3, UKMOT: 1 },
      errors: [],
      invalid: 0,
      committed: true,
      replaced: null,
      sampleRemoved: 0,
    });
  });

  test('a refused import counts nothing as imported, however many good lines it had', async () => {
    const report = await importInto(
      store,
      [
        [rec('R1'), rec('R1'), '{"operation":"Check","registration":"R9","delete":true}', 'nope', rec('R2')].join(
          '\n',
        ) + '\n',
      ],
      { replace: 'named' },
    );
    expect(report).toEqual({
      lines: 5,
      imported: 0,
      deleted: 0,
      repeated: 0,
      byOperation: {},
      errors: [{ line: 4, reason: expect.stringMatching(/not valid JSON/) }],
      invalid: 1,
      committed: false,
      replaced: null,
      sampleRemoved: 0,
    });
  });

  test('two bad lines in one run: each is listed with its own reason', async () => {
    const report = await importInto(store, [
      [rec('W1'), '{"operation":"Nope"}', rec('W2'), 'nope', '[1]'].join('\n') + '\n',
    ]);
    expect(report.errors).toEqual([
      // Every problem of the line, the first as a line with one problem reads.
      { line: 2, reason: 'unknown operation "Nope"; "registration" must be a string' },
      { line: 4, reason: expect.stringMatching(/^not valid JSON/) },
      { line: 5, reason: 'a record must be a JSON object' },
    ]);
  });

  test('every bad line is counted; the first 50 are listed by number, in order', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => (i % 2 ? 'nope' : rec(`G${i}`)));
    const report = await importInto(store, [lines.join('\n') + '\n']);
    expect(report.invalid).toBe(30);
    expect(report.errors.map((e) => e.line)).toEqual(Array.from({ length: 30 }, (_, i) => 2 * i + 2));
    const many = await importInto(store, [Array.from({ length: 60 }, () => 'nope').join('\n')]);
    expect(many.invalid).toBe(60);
    expect(many.errors.map((e) => e.line)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  test('the metrics count imports by result and the records committed ones wrote (README, Metrics)', async () => {
    const text = async () => metrics().registry.metrics();
    const value = (t: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(t)?.[1] ?? 0);
    const before = await text();
    expect(
      (
        await importInto(store, [
          rec('K1') + '\n' + rec('K2') + '\n' + '{"operation":"Check","registration":"K3","delete":true}\n',
        ])
      ).committed,
    ).toBe(true);
    expect((await importInto(store, [rec('K4') + '\nnope\n'])).committed).toBe(false);
    const after = await text();
    expect(value(after, 'reglookup_imported_records_total') - value(before, 'reglookup_imported_records_total')).toBe(
      2,
    );
    expect(
      value(after, 'reglookup_imports_total\\{result="committed"\\}') -
        value(before, 'reglookup_imports_total\\{result="committed"\\}'),
    ).toBe(1);
    expect(
      value(after, 'reglookup_imports_total\\{result="rolled_back"\\}') -
        value(before, 'reglookup_imports_total\\{result="rolled_back"\\}'),
    ).toBe(1);
  });
});

/** A store that writes down what the import asks of it. */
class RecordingStore {
  calls: unknown[] = [];
  constructor(
    private readonly onlySample = false,
    private readonly failOnPut = -1,
  ) {}
  async holdsOnlySample() {
    this.calls.push('holdsOnlySample');
    return this.onlySample;
  }
  async count() {
    return 7;
  }
  async beginImport(options: unknown): Promise<ImportBatch> {
    this.calls.push(['begin', options]);
    let puts = 0;
    return {
      put: async (r: StoredRecord, fresh?: boolean) => {
        if (puts++ === this.failOnPut) throw new Error('disk full');
        this.calls.push(['put', r.registration, fresh]);
      },
      delete: async (k: RecordKey) => void this.calls.push(['delete', k.registration]),
      replaceOperation: async (op: string) => void this.calls.push(['replace', op]),
      commit: async () => void this.calls.push('commit'),
      rollback: async () => void this.calls.push('rollback'),
    };
  }
}
const asStore = (s: RecordingStore) => s as unknown as VehicleStore;

describe('what the store is told', () => {
  test("a put is vouched fresh only when no earlier line had its key (README: COPY straight in while every line is its key's first)", async () => {
    const s = new RecordingStore();
    await importInto(asStore(s), [
      [rec('A1'), rec('B1'), rec('a 1'), '{"operation":"Check","registration":"C1","delete":true}', rec('C1')].join(
        '\n',
      ) + '\n',
    ]);
    expect(s.calls.filter((c) => Array.isArray(c) && (c[0] === 'put' || c[0] === 'delete'))).toEqual([
      ['put', 'A1', true],
      ['put', 'B1', true],
      ['put', 'A1', false],
      ['delete', 'C1'],
      ['put', 'C1', false],
    ]);
    expect(s.calls[s.calls.length - 1]).toBe('commit');
  });

  test('--replace: each operation the file names is replaced once, before its first line', async () => {
    const s = new RecordingStore();
    const mot = '{"operation":"UKMOT","registration":"M1","mot":{}}';
    const report = await importInto(
      asStore(s),
      [[rec('A1'), mot, rec('B1'), '{"operation":"UKMOT","registration":"M2","delete":true}'].join('\n') + '\n'],
      { replace: 'named' },
    );
    expect(report.replaced).toEqual(['Check', 'UKMOT']);
    expect(s.calls.slice(1)).toEqual([
      ['begin', { replace: undefined, sample: undefined }],
      ['replace', 'Check'],
      ['put', 'A1', true],
      ['replace', 'UKMOT'],
      ['put', 'M1', true],
      ['put', 'B1', true],
      ['delete', 'M2'],
      'commit',
    ]);
  });

  test('--replace into a store holding only the sample: the whole store is replaced, so no operation is named to the store', async () => {
    const s = new RecordingStore(true);
    const report = await importInto(asStore(s), [rec('A1') + '\n'], { replace: 'named' });
    expect(report).toMatchObject({ committed: true, sampleRemoved: 7, replaced: ['Check'] });
    expect(s.calls).toEqual([
      'holdsOnlySample',
      ['begin', { replace: 'all', sample: undefined }],
      ['put', 'A1', true],
      'commit',
    ]);
  });

  test('loading the sample itself does not remove the sample; --replace-all says so to the store', async () => {
    const sample = new RecordingStore(true);
    expect(await importInto(asStore(sample), [rec('S1') + '\n'], { sample: true })).toMatchObject({
      committed: true,
      sampleRemoved: 0,
      replaced: null,
    });
    expect(sample.calls[0]).toEqual(['begin', { replace: undefined, sample: true }]);
    const all = new RecordingStore();
    expect(await importInto(asStore(all), [rec('S1') + '\n'], { replace: 'all' })).toMatchObject({
      committed: true,
      replaced: 'all',
    });
    expect(all.calls).toEqual([
      'holdsOnlySample',
      ['begin', { replace: 'all', sample: undefined }],
      ['put', 'S1', true],
      'commit',
    ]);
  });

  test('a store that fails mid-import: the import fails with its error and the batch is rolled back', async () => {
    const s = new RecordingStore(false, 1);
    await expect(importInto(asStore(s), [[rec('A1'), rec('B1'), rec('C1')].join('\n') + '\n'])).rejects.toThrow(
      'disk full',
    );
    expect(s.calls.slice(-1)).toEqual(['rollback']);
    expect(s.calls).not.toContain('commit');
  });
});

describe('one line: refusals and their reasons', () => {
  test.each([
    ['an array', '[1,2]', /must be a JSON object/],
    ['a string', '"Check"', /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
    ['"delete":false', '{"operation":"Check","registration":"A1","delete":false}', /"delete" must be true/],
    [
      'a deletion with a body',
      '{"operation":"Check","registration":"A1","delete":true,"vehicle":{}}',
      /^a deletion holds only operation, registration, state and "delete":true$/,
    ],
    [
      'a deletion with an unknown key',
      '{"operation":"Check","registration":"A1","delete":true,"colour":"x"}',
      /^unknown key "colour" in the record/,
    ],
    [
      'a record with an unknown key',
      '{"operation":"Check","registration":"A1","vehicle":{},"colour":"x"}',
      /^unknown key "colour" in the record/,
    ],
    [
      'a vehicle on UKMOT',
      '{"operation":"UKMOT","registration":"A1","vehicle":{}}',
      /^a UKMOT record holds "mot", not "vehicle"$/,
    ],
    [
      'mot on CheckUSA',
      '{"operation":"CheckUSA","registration":"A1","state":"CA","mot":{}}',
      /^a CheckUSA record holds "vehicle", not "mot"$/,
    ],
    [
      'a state that is not a string',
      '{"operation":"CheckUSA","registration":"A1","state":5,"vehicle":{}}',
      /^"state" is required for CheckUSA$/,
    ],
    [
      'an operation that is not a string',
      '{"operation":5,"registration":"A1","vehicle":{}}',
      /^"operation" is missing/,
    ],
    [
      'a registration that is not a string',
      '{"operation":"Check","registration":5,"vehicle":{}}',
      /^"registration" must be a string$/,
    ],
    [
      'a line of over a million characters',
      `{"operation":"Check","registration":"A1","vehicle":{"Description":"${'x'.repeat(1 << 20)}"}}`,
      /^line is longer than \d+ characters$/,
    ],
  ])('refuses %s, saying why', (_name, text, reason) => {
    const r = parseLine(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  test('a line of exactly 1,048,576 characters is not too long; one more is', () => {
    const head = '{"operation":"Check","registration":"A1","vehicle":{';
    const fields: string[] = [];
    let length = head.length + 2;
    for (let i = 0; length < 1048576 - 9000; i++) {
      const f = `"k${i}":"${'v'.repeat(8000)}"`;
      fields.push(f);
      length += f.length + 1;
    }
    const last = (n: number) => `"z":"${'v'.repeat(n)}"`;
    const fill = 1048576 - length - last(0).length;
    const exact = head + [...fields, last(fill)].join(',') + '}}';
    expect(exact).toHaveLength(1048576);
    expect(parseLine(exact).ok).toBe(true);
    const longer = head + [...fields, last(fill + 1)].join(',') + '}}';
    expect(parseLine(longer)).toEqual({ ok: false, reason: 'line is longer than 1048576 characters' });
  });

  test('an unknown operation is named, but only its first 40 characters', () => {
    const r = parseLine(`{"operation":"${'Q'.repeat(100)}","registration":"A1","vehicle":{}}`);
    expect(r).toEqual({ ok: false, reason: `unknown operation "${'Q'.repeat(40)}"` });
  });

  test('a deletion is the key alone, normalised', () => {
    expect(
      parseLine('{"operation":"CheckAustralia","registration":"abc-123","state":"Victoria","delete":true}'),
    ).toEqual({
      ok: true,
      delete: true,
      record: { operation: 'CheckAustralia', registration: 'ABC123', state: 'VIC' },
    });
  });
});

describe("one line: which layouts keep the body's text", () => {
  const payloadOf = (text: string) => {
    const r = parseLine(text);
    if (!r.ok || r.delete) throw new Error(`not a put: ${JSON.stringify(r)}`);
    return r.record.payload;
  };

  test("export's layout, with a state and with a number form JSON.stringify would change: kept byte for byte", () => {
    expect(payloadOf('{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":{"Price":1.50}}')).toBe(
      '{"Price":1.50}',
    );
    expect(payloadOf('{"operation":"UKMOT","registration":"M1","mot":{"make":"FORD",  "taxDate":"2026-09-01"}}')).toBe(
      '{"make":"FORD",  "taxDate":"2026-09-01"}',
    );
  });

  test('a space before the body, after it, or after the line: another layout, so written as JSON.stringify writes it', () => {
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle": {"Price":1.50}}')).toBe('{"Price":1.5}');
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":{"Price":1.50} }')).toBe('{"Price":1.5}');
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":{"Price":1.50}} ')).toBe('{"Price":1.5}');
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":{"Price":1.50}}\t')).toBe('{"Price":1.5}');
  });

  test('the state where export writes none, or the body before the key: another layout', () => {
    expect(payloadOf('{"operation":"CheckUSA","registration":"A1","vehicle":{"Price":1.50},"state":"CA"}')).toBe(
      '{"Price":1.5}',
    );
    expect(payloadOf('{"vehicle":{"Price":1.50},"operation":"Check","registration":"A1"}')).toBe('{"Price":1.5}');
  });

  test('a body followed by a repeated key of any name: the last value, as JSON.stringify writes it', () => {
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":{"Price":1.50},"operation":"Check"}')).toBe(
      '{"Price":1.5}',
    );
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":{"Price":1.50},"registration":"A1"}')).toBe(
      '{"Price":1.5}',
    );
    expect(payloadOf('{"operation":"Check","registration":"A1","vehicle":"x","vehicle":{"Price":1.50}}')).toBe(
      '{"Price":1.5}',
    );
  });
});

describe('export', () => {
  /** A store of n records in key order, as records() pages through them. */
  const storeOf = (n: number) =>
    ({
      async *records() {
        for (let i = 0; i < n; i++)
          yield {
            operation: 'Check',
            registration: `E${String(i).padStart(5, '0')}`,
            state: '',
            payload: `{"n":${i}}`,
          };
      },
    }) as unknown as VehicleStore;

  test('every record, in order, through an output that is slow to drain; progress every 1,000 records and at the end', async () => {
    const got: string[] = [];
    const out = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _enc, done) {
        got.push(chunk.toString('utf8'));
        setImmediate(done);
      },
    });
    const progress: number[] = [];
    expect(await exportRecords(storeOf(2500), out, (n) => progress.push(n))).toBe(2500);
    expect(progress).toEqual([1000, 2000, 2500]);
    const lines = got.join('').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(2500);
    expect(lines[0]).toBe('{"operation":"Check","registration":"E00000","vehicle":{"n":0}}');
    expect(lines[2499]).toBe('{"operation":"Check","registration":"E02499","vehicle":{"n":2499}}');
    lines.forEach((l, i) =>
      expect(l).toBe(`{"operation":"Check","registration":"E${String(i).padStart(5, '0')}","vehicle":{"n":${i}}}`),
    );
  });

  test("each operation's line as the README shows the import format: state only where the operation has one, mot for UKMOT", () => {
    expect(
      exportLine({
        operation: 'CheckUSA',
        registration: '7ABC123',
        state: 'CA',
        payload: '{"Description":"FORD F-150"}',
      }),
    ).toBe('{"operation":"CheckUSA","registration":"7ABC123","state":"CA","vehicle":{"Description":"FORD F-150"}}');
    expect(exportLine({ operation: 'CheckAustralia', registration: 'ABC123', state: 'VIC', payload: '{}' })).toBe(
      '{"operation":"CheckAustralia","registration":"ABC123","state":"VIC","vehicle":{}}',
    );
    expect(exportLine({ operation: 'Check', registration: 'RG11ABC', state: '', payload: '{"Price":1.50}' })).toBe(
      '{"operation":"Check","registration":"RG11ABC","vehicle":{"Price":1.50}}',
    );
    expect(
      exportLine({ operation: 'UKMOT', registration: 'AB12CDE', state: '', payload: '{"make":"FORD","tests":[]}' }),
    ).toBe('{"operation":"UKMOT","registration":"AB12CDE","mot":{"make":"FORD","tests":[]}}');
    expect(exportLine({ operation: 'Check', registration: 'Q"\\', state: '', payload: '{}' })).toBe(
      '{"operation":"Check","registration":"Q\\"\\\\","vehicle":{}}',
    );
  });

  test('an empty store: nothing written, progress says 0', async () => {
    const writes: string[] = [];
    const out = new Writable({ write: (c: Buffer, _e, done) => (writes.push(c.toString()), done()) });
    const progress: number[] = [];
    expect(await exportRecords(storeOf(0), out, (n) => progress.push(n))).toBe(0);
    expect(writes).toEqual([]);
    expect(progress).toEqual([0]);
    expect(await exportRecords(storeOf(1000), out)).toBe(1000);
  });

  test('an output that takes everything at once: the export does not wait for a drain that never comes', async () => {
    let text = '';
    const out = new Writable({
      highWaterMark: 1 << 20,
      write: (c: Buffer, _e, done) => ((text += c.toString()), done()),
    });
    expect(await exportRecords(storeOf(3), out)).toBe(3);
    expect(await exportRecords(storeOf(1001), out)).toBe(1001);
    expect(text.split('\n')).toHaveLength(3 + 1001 + 1);
  });
});

describe('backup', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-backup-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a store without a backup of its own (PostgreSQL) says to use its tools', async () => {
    await expect(backupStore({} as VehicleStore, path.join(dir, 'b.db'))).rejects.toThrow(BackupError);
    await expect(backupStore({} as VehicleStore, path.join(dir, 'b.db'))).rejects.toThrow(/pg_dump/);
  });

  /** A store whose backup is two files, as SQLite's (the records at the name given, the accounts beside it). */
  const twoFiles = (backup: (to: readonly string[], p: unknown) => Promise<void>) =>
    ({ backupFiles: (d: string) => [d, d.replace(/\.db$/, '.accounts.db')], backup }) as unknown as VehicleStore;

  test('an existing file is never overwritten, neither the one named nor the other file of the backup', async () => {
    const dest = path.join(dir, 'b.db');
    const store = twoFiles(async (to) => to.forEach((f) => fs.writeFileSync(f, 'new')));
    fs.writeFileSync(dest, 'keep');
    await expect(backupStore(store, dest)).rejects.toThrow(BackupError);
    await expect(backupStore(store, dest)).rejects.toThrow(/b\.db already exists/);
    expect(fs.readFileSync(dest, 'utf8')).toBe('keep');
    expect(fs.readdirSync(dir)).toEqual(['b.db']);
    fs.renameSync(dest, path.join(dir, 'b.accounts.db'));
    await expect(backupStore(store, dest)).rejects.toThrow(/b\.accounts\.db already exists/);
    expect(fs.readdirSync(dir)).toEqual(['b.accounts.db']);
  });

  test('a backup that fails half way leaves no file at the names given, and nothing else behind', async () => {
    const dest = path.join(dir, 'b.db');
    const store = twoFiles(async (to) => {
      fs.writeFileSync(to[0], 'whole');
      fs.writeFileSync(to[1], 'half');
      throw new Error('disk full');
    });
    await expect(backupStore(store, dest)).rejects.toThrow('disk full');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('a whole backup is at the names given, written under other names first, progress passed on', async () => {
    const dest = path.join(dir, 'b.db');
    const seen: string[] = [];
    const progress = () => undefined;
    const store = twoFiles(async (to, p) => {
      seen.push(...to);
      expect(p).toBe(progress);
      expect(fs.existsSync(dest)).toBe(false);
      to.forEach((f, i) => fs.writeFileSync(f, `whole ${i}`));
    });
    expect(await backupStore(store, dest, progress)).toEqual([dest, path.join(dir, 'b.accounts.db')]);
    expect(seen).toHaveLength(2);
    expect(seen).not.toContain(dest);
    for (const f of seen) expect(path.dirname(f)).toBe(dir);
    expect(fs.readFileSync(dest, 'utf8')).toBe('whole 0');
    expect(fs.readFileSync(path.join(dir, 'b.accounts.db'), 'utf8')).toBe('whole 1');
    expect(fs.readdirSync(dir).sort()).toEqual(['b.accounts.db', 'b.db']);
  });

  test('--force replaces both files of an earlier backup, only once the new copy is whole', async () => {
    const dest = path.join(dir, 'b.db');
    fs.writeFileSync(dest, 'old 0');
    fs.writeFileSync(path.join(dir, 'b.accounts.db'), 'old 1');
    const failing = twoFiles(async () => {
      throw new Error('disk full');
    });
    await expect(backupStore(failing, dest, undefined, { force: true })).rejects.toThrow('disk full');
    expect(fs.readFileSync(dest, 'utf8')).toBe('old 0');
    const store = twoFiles(async (to) => to.forEach((f, i) => fs.writeFileSync(f, `new ${i}`)));
    await backupStore(store, dest, undefined, { force: true });
    expect(fs.readFileSync(dest, 'utf8')).toBe('new 0');
    expect(fs.readFileSync(path.join(dir, 'b.accounts.db'), 'utf8')).toBe('new 1');
    expect(fs.readdirSync(dir).sort()).toEqual(['b.accounts.db', 'b.db']);
  });
});

describe('the repeated-key count', () => {
  test('a key whose hash has a zero half is a key like any other', () => {
    const keys = new KeySet(16);
    expect(keys.addHash(0, 5)).toBe(false);
    expect(keys.addHash(7, 0)).toBe(false);
    expect(keys.addHash(0, 5)).toBe(true);
    expect(keys.addHash(7, 0)).toBe(true);
    expect(keys.addHash(5, 0)).toBe(false);
    expect(keys.size).toBe(3);
    // Two keys that share one half of their hash are still two keys, in any number.
    expect(keys.addHash(3, 5)).toBe(false);
    expect(keys.addHash(7, 9)).toBe(false);
    for (let i = 1; i <= 2000; i++) expect(keys.addHash(11, i)).toBe(false);
    for (let i = 1; i <= 2000; i++) expect(keys.addHash(i + 100, 13)).toBe(false);
    expect(keys.size).toBe(4005);
    // The table has grown many times since: the keys with a zero half are still there.
    expect(keys.addHash(0, 5)).toBe(true);
    expect(keys.addHash(7, 0)).toBe(true);
    expect(keys.addHash(5, 0)).toBe(true);
    expect(keys.addHash(11, 2000)).toBe(true);
    expect(keys.addHash(2100, 13)).toBe(true);
  });

  test('a million distinct keys, none counted as a repeat (the count is exact, README: how many lines repeated a key)', () => {
    const keys = new KeySet();
    let repeats = 0;
    for (let i = 0; i < 1_000_000; i++) if (keys.addSeen(`Check\u0001R${i}\u0001`)) repeats++;
    expect(repeats).toBe(0);
    expect(keys.size).toBe(1_000_000);
  });
});

describe('worker threads', () => {
  test("with threads the run's bytes are moved to a thread; without, the run is parsed here and the bytes stay", async () => {
    for (const [count, moved] of [
      [0, false],
      [1, true],
    ] as const) {
      const runner = chunkRunner(count);
      try {
        const bytes = new TextEncoder().encode(rec('T1') + '\n'); // its own buffer, as the reader's runs are
        const done = runner.run(bytes);
        expect(bytes.byteLength === 0).toBe(moved);
        expect((await done).kinds).toEqual(Uint8Array.of(1));
      } finally {
        await runner.close();
      }
    }
  });

  test("closing the runner ends its threads (Linux: the process's thread count is back where it was)", async () => {
    if (!fs.existsSync('/proc/self/task')) return;
    const threads = () => fs.readdirSync('/proc/self/task').length;
    const before = threads();
    const runner = chunkRunner(2);
    await Promise.all([runner.run(utf8(rec('T1') + '\n')), runner.run(utf8(rec('T2') + '\n'))]);
    expect(threads()).toBeGreaterThan(before);
    await runner.close();
    expect(threads()).toBe(before);
  });

  test('runs come back in the order sent, over several threads', async () => {
    const runner = chunkRunner(3);
    try {
      const runs = Array.from({ length: 7 }, (_, i) => runner.run(utf8(rec(`T${i}`) + '\n')));
      const out = await Promise.all(runs);
      expect(out.map((p) => p.text.split('Check')[1].slice(0, 2))).toEqual(['T0', 'T1', 'T2', 'T3', 'T4', 'T5', 'T6']);
    } finally {
      await runner.close();
    }
  });

  test('a thread that fails fails the runs waiting on it, rather than leaving them waiting', async () => {
    const runner = chunkRunner(1);
    try {
      // Not a byte array: the thread's decoder throws.
      await expect(runner.run({ buffer: new ArrayBuffer(4) } as unknown as Uint8Array)).rejects.toThrow();
    } finally {
      await runner.close();
    }
  });
});
