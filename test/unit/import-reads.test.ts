// How an import reads its bytes, at its public entry points (importStream, importFile) and a real
// SQLite store, each case a hand-written file: what the README's "Importing your own vehicles" says
// of it (NDJSON, one record per line; any other key of `vehicle` is kept in `vehicleJson`; the
// stored text is the line's `vehicle` text, byte for byte in export's layout; lines are decoded on
// worker threads with --workers). Only a UTF-8 BOM at the very start of the file is not data: the
// same three bytes anywhere else, or a first character that merely starts like one, are the file's
// text. And an import, however it ends, leaves no file handle and no thread behind.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { importFile, importStream } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';

jest.setTimeout(60_000);

const rec = (reg: string, d: string) =>
  `{"operation":"Check","registration":"${reg}","vehicle":{"Description":"${d}"}}`;
const utf8 = (s: string) => Buffer.from(s, 'utf8');

let store: SqliteStore;
let dir: string;
beforeEach(() => {
  store = new SqliteStore(':memory:');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-reads-'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
const stored = async (reg: string) =>
  (await store.get({ operation: 'Check', registration: reg, state: '' }))?.payload ?? null;

describe('U+FEFF and its look-alikes', () => {
  test('a U+FEFF inside a value is kept, also where a read starts with it', async () => {
    const line = rec('FE1', 'A\ufeffB');
    const cut = line.indexOf('\ufeff');
    // The second read starts with the bytes EF BB BF: they are the value's, not a BOM.
    const report = await importStream(
      store,
      Readable.from([utf8(line.slice(0, cut)), utf8(line.slice(cut) + '\n' + rec('FE2', 'C') + '\n')]),
    );
    expect(report).toMatchObject({ committed: true, lines: 2, imported: 2, errors: [] });
    expect(await stored('FE1')).toBe('{"Description":"A\ufeffB"}');
    // A file with a BOM of its own first: that one is dropped, the later one still kept.
    await store.close();
    store = new SqliteStore(':memory:');
    const withBom = await importStream(
      store,
      Readable.from([
        Buffer.from([0xef, 0xbb, 0xbf]),
        utf8(rec('FE0', 'Z') + '\n' + line.slice(0, cut)),
        utf8(line.slice(cut) + '\n'),
      ]),
    );
    expect(withBom).toMatchObject({ committed: true, lines: 2, imported: 2, errors: [] });
    expect(await stored('FE0')).toBe('{"Description":"Z"}');
    expect(await stored('FE1')).toBe('{"Description":"A\ufeffB"}');
  });

  // Bytes EF BB BE (U+FEFE: EF BB and then not BF), EF BC BF (U+FF3F: EF, then not BB, then BF) and
  // E3 BB BF (U+3EFF: not EF, then BB BF). Each starts the file, so its first line is not JSON and is
  // refused; the line after it is fine, and the file is not imported.
  test.each([
    ['U+FEFE (EF BB BE)', '\ufefe'],
    ['U+FF3F (EF BC BF)', '\uff3f'],
    ['U+3EFF (E3 BB BF)', '\u3eff'],
  ])('a file starting with %s is read as written: its first line is refused as not JSON', async (_name, c) => {
    const report = await importStream(
      store,
      Readable.from([utf8(c + rec('LA1', 'X') + '\n' + rec('LA2', 'Y') + '\n')]),
    );
    expect(report).toMatchObject({ committed: false, lines: 2, invalid: 1 });
    expect(report.errors).toEqual([{ line: 1, reason: expect.stringMatching(/not valid JSON/) }]);
    expect(await stored('LA2')).toBeNull();
  });
});

describe('importFile', () => {
  test('a line longer than a read (1.4 MB of two-byte text in a key kept in vehicleJson) is stored whole, and so are the lines after it', async () => {
    const file = path.join(dir, 'long.ndjson');
    const notes = 'é'.repeat(700_000);
    const long = `{"operation":"Check","registration":"LONG1","vehicle":{"Description":"long","Notes":"${notes}"}}`;
    fs.writeFileSync(file, long + '\n' + rec('AFTER1', 'after') + '\n');
    expect(Buffer.byteLength(long)).toBeGreaterThan(1024 * 1024);
    const report = await importFile(store, file);
    expect(report).toMatchObject({ committed: true, lines: 2, imported: 2, errors: [] });
    expect(await stored('LONG1')).toBe(`{"Description":"long","Notes":"${notes}"}`);
    expect(await stored('AFTER1')).toBe('{"Description":"after"}');
  });

  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const linux = fs.existsSync('/proc/self/fd') ? test : test.skip;

  linux(
    'the file is closed when the import ends: committed, refused, or failed in the store (Linux: /proc/self/fd)',
    async () => {
      const good = path.join(dir, 'good.ndjson');
      const bad = path.join(dir, 'bad.ndjson');
      fs.writeFileSync(good, rec('FD1', 'X') + '\n');
      fs.writeFileSync(bad, '{"operation":"Nope"}\n');
      await importFile(store, good); // anything opened once per process (not per import) is open from here on
      const before = fds();
      expect(await importFile(store, good)).toMatchObject({ committed: true });
      expect(fds()).toBe(before);
      expect(await importFile(store, bad)).toMatchObject({ committed: false });
      expect(fds()).toBe(before);
      // A store that fails before the batch begins.
      const closed = new SqliteStore(':memory:');
      await closed.close();
      const fdsClosedStore = fds();
      await expect(importFile(closed, good)).rejects.toThrow();
      expect(fds()).toBe(fdsClosedStore);
    },
  );
});

describe('--workers', () => {
  const threads = () => fs.readdirSync('/proc/self/task').length;
  /**
   * The thread count once exited threads are gone (a terminated worker's OS thread ends a moment after it resolves).
   */
  const settled = async (want: number) => {
    for (let i = 0; i < 40 && threads() > want; i++) await new Promise((r) => setTimeout(r, 50));
    return threads();
  };
  const linux = fs.existsSync('/proc/self/task') ? test : test.skip;

  linux('an import on worker threads leaves none behind, committed or refused (Linux: /proc/self/task)', async () => {
    // Threads Node starts once and keeps (libuv's pool, the file system's) come first, so that they
    // are counted before as after.
    await importStream(store, Readable.from([utf8(rec('WARM', 'warm') + '\n')]), { workers: 2 });
    const before = await settled(0);
    const lines = Array.from({ length: 50 }, (_, i) => rec(`W${i}`, `w${i}`)).join('\n') + '\n';
    expect(await importStream(store, Readable.from([utf8(lines)]), { workers: 2 })).toMatchObject({
      committed: true,
      imported: 50,
    });
    expect(await stored('W49')).toBe('{"Description":"w49"}');
    expect(await settled(before)).toBe(before);
    expect(await importStream(store, Readable.from([utf8('{"operation":"Nope"}\n')]), { workers: 2 })).toMatchObject({
      committed: false,
    });
    expect(await settled(before)).toBe(before);
  });
});
