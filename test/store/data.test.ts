// Moving data in and out, on every store (the README's "Importing your own vehicles", "Full
// refresh", "Export" and "Scaling out" sections): deletions, replacing imports, the bundled sample
// giving way to real data, a full refresh while another instance reads, export in code-point key
// order from one snapshot, and moving a store from SQLite to PostgreSQL by `export | import`.

import { PassThrough, Readable } from 'node:stream';
import { loadSampleIfEmpty } from '../../src/app';
import { backupStore } from '../../src/data/backup';
import { exportRecords } from '../../src/data/export';
import { importStream } from '../../src/data/import';
import { createLogger } from '../../src/ops/logger';
import type { StoredRecord, VehicleStore } from '../../src/store/store';
import { describeStores, open, storeKind } from '../helpers/stores';
import { car, check, description, run, usa } from '../helpers/import-lines';

jest.setTimeout(60_000);

async function exported(store: VehicleStore): Promise<string> {
  const chunks: Buffer[] = [];
  const out = new PassThrough();
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportRecords(store, out);
  return Buffer.concat(chunks).toString('utf8');
}

describeStores('%s store', (kind) => {
  let url: string;
  let store: VehicleStore;
  beforeEach(() => {
    url = kind.url();
    store = open(url);
  });
  afterEach(() => store.close());

  test('a deletion line removes its record; one for a key not there is counted, not an error', async () => {
    await run(store, {}, check('DEL1', 'GOES'), check('KEEP1', 'STAYS'), usa('7ABC123', 'US CAR'));
    const report = await run(
      store,
      {},
      JSON.stringify({ operation: 'Check', registration: 'del 1', delete: true }),
      JSON.stringify({ operation: 'Check', registration: 'NEVERTHERE', delete: true }),
      JSON.stringify({ operation: 'CheckUSA', registration: '7ABC123', state: 'California', delete: true }),
    );
    expect(report).toMatchObject({ committed: true, deleted: 3, imported: 0 });
    expect(await description(store, 'Check', 'DEL1')).toBeNull();
    expect(await description(store, 'CheckUSA', '7ABC123', 'CA')).toBeNull();
    expect(await description(store, 'Check', 'KEEP1')).toBe('STAYS');
  });

  test('in one batch a later put or delete of the same key wins', async () => {
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'K1', state: '', payload: '{"Description":"first"}' });
    await batch.delete({ operation: 'Check', registration: 'K1', state: '' });
    await batch.delete({ operation: 'Check', registration: 'K2', state: '' });
    await batch.put({ operation: 'Check', registration: 'K2', state: '', payload: '{"Description":"back"}' });
    await batch.commit();
    expect(await description(store, 'Check', 'K1')).toBeNull();
    expect(await description(store, 'Check', 'K2')).toBe('back');
  });

  test('into an empty store: fresh records, then a repeat, a deletion of an earlier record and more fresh ones, all as the file says', async () => {
    const lines = [
      ...Array.from({ length: 300 }, (_, i) => check(`E${i}`, `first ${i}`)),
      check('E7', 'second 7'), // the first repeat
      JSON.stringify({ operation: 'Check', registration: 'E8', delete: true }),
      ...Array.from({ length: 300 }, (_, i) => check(`F${i}`, `fresh ${i}`)),
      check('E7', 'third 7'),
      JSON.stringify({ operation: 'Check', registration: 'F5', delete: true }),
      check('F5', 'back 5'),
    ];
    const report = await run(store, {}, ...lines);
    expect(report).toMatchObject({ committed: true, imported: 603, deleted: 2, repeated: 5 });
    expect(await store.count()).toBe(599);
    expect(await description(store, 'Check', 'E7')).toBe('third 7');
    expect(await description(store, 'Check', 'E8')).toBeNull();
    expect(await description(store, 'Check', 'E9')).toBe('first 9');
    expect(await description(store, 'Check', 'F5')).toBe('back 5');
    expect(await description(store, 'Check', 'F299')).toBe('fresh 299');
  });

  test('into an empty store: fresh records, then a deletion of one of them before any repeat', async () => {
    const report = await run(
      store,
      {},
      check('G1', 'one'),
      check('G2', 'two'),
      JSON.stringify({ operation: 'Check', registration: 'G1', delete: true }),
      check('G3', 'three'),
    );
    expect(report).toMatchObject({ committed: true, imported: 3, deleted: 1 });
    expect(await description(store, 'Check', 'G1')).toBeNull();
    expect(await description(store, 'Check', 'G2')).toBe('two');
    expect(await description(store, 'Check', 'G3')).toBe('three');
    expect(await store.count()).toBe(2);
  });

  test('into an empty store: a batch whose puts carry no fresh hint, with a key put twice, keeps the last', async () => {
    const batch = await store.beginImport();
    await batch.put({ operation: 'Check', registration: 'H1', state: '', payload: '{"Description":"one"}' }, true);
    await batch.put({ operation: 'Check', registration: 'H2', state: '', payload: '{"Description":"two"}' });
    await batch.put({ operation: 'Check', registration: 'H2', state: '', payload: '{"Description":"three"}' });
    await batch.commit();
    expect(await description(store, 'Check', 'H1')).toBe('one');
    expect(await description(store, 'Check', 'H2')).toBe('three');
    expect(await store.count()).toBe(2);
  });

  test('--replace: the operations the file names hold exactly its records; the others are untouched', async () => {
    await run(store, {}, check('A1', 'OLD A'), check('B1', 'OLD B'), usa('X1', 'OLD X'));
    const report = await run(store, { replace: 'named' }, check('B1', 'NEW B'), check('C1', 'NEW C'));
    expect(report).toMatchObject({ committed: true, replaced: ['Check'] });
    expect(await description(store, 'Check', 'A1')).toBeNull();
    expect(await description(store, 'Check', 'B1')).toBe('NEW B');
    expect(await description(store, 'Check', 'C1')).toBe('NEW C');
    expect(await description(store, 'CheckUSA', 'X1', 'CA')).toBe('OLD X');
  });

  test('--replace with --min-keep counts each operation the file names, on this store too; --dry-run counts per operation', async () => {
    await run(store, {}, check('K1', 'one'), check('K2', 'two'), check('K3', 'three'), usa('U1', 'us'));
    expect(await store.countByOperation()).toEqual({ Check: 3, CheckUSA: 1 });
    // One Check record of three: less than 50 % of the operation, whatever the store holds besides.
    const refused = await run(store, { replace: 'named', minKeep: 50 }, check('K1', 'one'));
    expect(refused.shrinkRefused).toEqual({ operation: 'Check', before: 3, after: 1, minKeep: 50 });
    expect(await store.count()).toBe(4);
    const dry = await run(
      store,
      { replace: 'named', dryRun: true },
      check('K1', 'one'),
      check('K2', 'TWO'),
      check('K4', 'four'),
    );
    expect(dry.dryRun?.operations).toEqual({ Check: { added: 1, changed: 1, unchanged: 1, removed: 1 } });
    expect(await store.countByOperation()).toEqual({ Check: 3, CheckUSA: 1 });
  });

  test('--replace-all: the store holds exactly the file; an invalid file changes nothing', async () => {
    await run(store, {}, check('A1', 'OLD A'), check('B1', 'OLD B'), usa('X1', 'OLD X'));
    for (const replace of ['all', 'named'] as const) {
      const bad = await run(
        store,
        { replace },
        check('C1', 'NEW C'),
        '{"operation":"Check","registration":"D1","vehicle":{},"colour":"x"}',
      );
      expect(bad.committed).toBe(false);
      expect(await store.count()).toBe(3);
      expect(await description(store, 'Check', 'C1')).toBeNull();
    }
    const report = await run(store, { replace: 'all' }, check('C1', 'NEW C'));
    expect(report).toMatchObject({ committed: true, replaced: 'all' });
    expect(await store.count()).toBe(1);
    expect(await description(store, 'Check', 'C1')).toBe('NEW C');
  });

  test('the first import of real data removes the bundled sample and says so; later imports add', async () => {
    await loadSampleIfEmpty(store, createLogger('silent', 'json'));
    expect(await store.holdsOnlySample()).toBe(true);
    // RG11 ABC is the README's demo plate for Check.
    expect(await store.get({ operation: 'Check', registration: 'RG11ABC', state: '' })).not.toBeNull();
    const sampleSize = await store.count();
    const first = await run(store, {}, check('REAL1', 'REAL ONE'));
    expect(first.sampleRemoved).toBe(sampleSize);
    expect(await store.holdsOnlySample()).toBe(false);
    expect(await store.get({ operation: 'Check', registration: 'RG11ABC', state: '' })).toBeNull();
    const second = await run(store, {}, check('REAL2', 'REAL TWO'));
    expect(second.sampleRemoved).toBe(0);
    expect(await store.count()).toBe(2);
  });

  test('--dry-run and the import agree on the sample: what the dry run says the store would hold, it then holds', async () => {
    // The same file each time: the README's demo plate RG11 ABC with real data, and one more plate.
    const file = [check('RG11ABC', 'REAL DEMO'), check('REAL1', 'REAL ONE')];
    for (const options of [{}, { replace: 'all' as const }]) {
      await store.close();
      url = kind.url();
      store = open(url);
      await loadSampleIfEmpty(store, createLogger('silent', 'json'));
      const sampleSize = await store.count();
      const dry = await run(store, { ...options, dryRun: true }, ...file);
      const real = await run(store, options, ...file);
      expect(real.committed).toBe(true);
      // The sample goes whole: the file's records are new data, none replaces a sample record.
      expect(dry.dryRun).toMatchObject({ before: sampleSize, added: 2, replaced: 0, removed: sampleSize });
      expect(dry.sampleRemoved).toBe(real.sampleRemoved);
      expect(dry.dryRun!.removed).toBe(real.sampleRemoved);
      expect(await store.count()).toBe(dry.dryRun!.before + dry.dryRun!.added - dry.dryRun!.removed);
      expect(dry.dryRun!.operations.Check).toMatchObject({ added: 2, changed: 0, unchanged: 0 });
    }
    // Real data, --replace-all: the same arithmetic, with a record replaced and one removed.
    const dry = await run(store, { replace: 'all', dryRun: true }, check('REAL1', 'CHANGED'), check('REAL2', 'TWO'));
    await run(store, { replace: 'all' }, check('REAL1', 'CHANGED'), check('REAL2', 'TWO'));
    expect(dry.dryRun).toMatchObject({ before: 2, added: 1, replaced: 1, changed: 1, removed: 1 });
    expect(await store.count()).toBe(2);
  });

  test('a full refresh while another instance reads: the old data set until the commit, then the new one', async () => {
    await run(store, {}, check('LIVE1', 'OLD LIVE'), check('GONE1', 'OLD GONE'));
    const reader = open(url);
    try {
      const input = new PassThrough();
      const done = importStream(store, input, { replace: 'all' });
      input.write(check('LIVE1', 'NEW LIVE') + '\n');
      for (let i = 0; i < 2000; i++) input.write(check(`NEW${i}`, `NEW ${i}`) + '\n');
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      expect(await description(reader, 'Check', 'LIVE1')).toBe('OLD LIVE');
      expect(await description(reader, 'Check', 'GONE1')).toBe('OLD GONE');
      expect(await description(reader, 'Check', 'NEW5')).toBeNull();
      input.end(check('NEW_LAST', 'NEW LAST') + '\n');
      expect(await done).toMatchObject({ committed: true, imported: 2002 });
      await new Promise((r) => setImmediate(r)); // SQLite: another connection's commit is seen from the next turn
      expect(await description(reader, 'Check', 'LIVE1')).toBe('NEW LIVE');
      expect(await description(reader, 'Check', 'GONE1')).toBeNull();
      expect(await description(reader, 'Check', 'NEW5')).toBe('NEW 5');
    } finally {
      await reader.close();
    }
  });

  test('records() come in code-point key order (upper case before lower, ASCII before accents), from one snapshot', async () => {
    const regs = ['b1', 'B1', 'A2', 'a1', 'Ü1', 'Z9', '1'];
    // Through the batch, as stored keys (an import would normalise them to upper case first).
    const batch = await store.beginImport();
    for (const r of regs)
      await batch.put({ operation: 'Check', registration: r, state: '', payload: JSON.stringify(car(r)) });
    await batch.put({ operation: 'CheckUSA', registration: 'X1', state: 'CA', payload: JSON.stringify(car('US')) });
    await batch.commit();
    const all: StoredRecord[] = [];
    const it = store.records()[Symbol.asyncIterator]();
    const first = await it.next();
    all.push(first.value as StoredRecord);
    // Written by another instance after the pass began: the pass does not see it (PostgreSQL:
    // REPEATABLE READ; SQLite: a read transaction of its own).
    const other = open(url);
    await run(other, {}, check('AA0', 'LATE'));
    await other.close();
    for (let r = await it.next(); !r.done; r = await it.next()) all.push(r.value);
    // Hand-sorted by code point: digits < upper case < lower case < U+00DC.
    expect(all.map((r) => `${r.operation}/${r.registration}/${r.state}`)).toEqual([
      'Check/1/',
      'Check/A2/',
      'Check/B1/',
      'Check/Z9/',
      'Check/a1/',
      'Check/b1/',
      'Check/Ü1/',
      'CheckUSA/X1/CA',
    ]);
    expect(await store.count()).toBe(9);
  });

  test('more records than one page: each once, in order, from the snapshot the pass began with', async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => check(`P${String(i).padStart(5, '0')}`, `P ${i}`));
    await run(store, {}, ...lines);
    const it = store.records()[Symbol.asyncIterator]();
    const seen: string[] = [((await it.next()).value as StoredRecord).registration];
    // Another instance changes records the pass has not reached yet (pages 2 and 3) and adds one
    // after them: the pass goes on seeing the store as it was when it began.
    const other = open(url);
    await run(
      other,
      {},
      JSON.stringify({ operation: 'Check', registration: 'P02000', delete: true }),
      check('P99999', 'LATE'),
    );
    await other.close();
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value.registration);
    expect(seen).toEqual(lines.map((_, i) => `P${String(i).padStart(5, '0')}`));
    expect(await store.count()).toBe(2500);
  });

  if (kind.name === 'postgres') {
    test('backup: PostgreSQL has none of its own, and the message says to use pg_dump', async () => {
      expect(store.backup).toBeUndefined();
      await expect(backupStore(store, '/tmp/never-written.db')).rejects.toThrow(/pg_dump/);
    });
  }
});

describeStores('export | import from SQLite into %s', (kind) => {
  test('the moved store exports the same bytes', async () => {
    const sqliteKind = storeKind('sqlite');
    const from = open(sqliteKind.url());
    const to = open(kind.url());
    try {
      const many = Array.from({ length: 1500 }, (_, i) => check(`MANY${i}`, `MANY ${i}`));
      await run(from, {}, check('ÜNÏCÖDE 1', 'Ünïcödé & <tags> "quotes"\ttab'), usa('9XYZ999', 'TX CAR'), ...many);
      const text = await exported(from);
      expect(text.length).toBeGreaterThan(1000);
      const report = await importStream(to, Readable.from([text]), { replace: 'all' });
      expect(report).toMatchObject({ committed: true, imported: await from.count() });
      expect(await exported(to)).toBe(text);
    } finally {
      await from.close();
      await to.close();
      await sqliteKind.cleanup();
    }
  });
});
