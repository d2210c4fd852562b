// NDJSON import, a use-case over the store: every line is checked (strict keys); records are
// written into one store batch as they are read (so memory stays flat), and the batch commits only
// if no line was invalid. A replacing import (--replace, --replace-all) makes the store hold
// exactly the file's records for the operations it replaces; readers see the old data set until
// the commit and the new one after it.

import fs from 'node:fs';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { countImport } from '../ops/metrics';
import type { ImportBatch, Replace, VehicleStore } from '../store/store';
import { BLANK, DELETE, INVALID, joined, overlongLine, SKIPPED, type PackedChunk } from './chunk';
import { DryRun, type DryRunReport } from './dryrun';
import { KeySet } from './keyset';
import { mvsHeader, MvsHeaderError, mvsWrittenAt, withEncoding, type MvsLayout } from './mvs';
import { CsvInputError, csvRuns, joinFuel, readFuel, splitHeader, vehicleHeaderProblem, type FuelMap } from './rdw';
import { chunkRunner, type ChunkRunner } from './workers';
import { csvEntries, isZip, ZipError, zipEntries, zipEntryBytes } from './zip';
import { isFormatHint } from './parse';

export type { DryRunReport } from './dryrun';

/** How many bad lines are reported before the rest are only counted. */
const MAX_REPORTED = 50;

export interface LineError {
  readonly line: number;
  readonly reason: string;
  /** The file, when an import reads several (--format ua-mvs). */
  readonly file?: string;
}

export interface ImportReport {
  readonly lines: number;
  /** Records written (put), repeats included; for --format ua-mvs the records (plates), each written once or more. */
  readonly imported: number;
  /** Deletion lines applied (a key that was not there counts too). */
  readonly deleted: number;
  /** Lines whose key an earlier line of the same file already had: the later line won. */
  readonly repeated: number;
  /** Rows left out by the format, counted (--format ua-mvs only: rows without a plate). */
  readonly skipped?: number;
  /**
   * Rows older than a row of the same key read before, so not applied (--format ua-mvs only: the
   * newest operation wins).
   */
  readonly superseded?: number;
  /** Files whose rows cannot hold a plate (--format ua-mvs only: no N_REG_NEW column; their rows are in `skipped`). */
  readonly withoutPlates?: readonly string[];
  readonly byOperation: Readonly<Record<string, number>>;
  readonly errors: readonly LineError[];
  /** Invalid lines, including those past the reporting cap. */
  readonly invalid: number;
  readonly committed: boolean;
  /** What the import replaced: the operations given, or 'all'; null for an ordinary import. */
  readonly replaced: Replace | null;
  /** Records of the bundled sample removed because this was the first import of real data (0 if none). */
  readonly sampleRemoved: number;
  /** A --replace-all refused because it would have shrunk the store below minKeep (nothing was written). */
  readonly shrinkRefused?: ShrinkRefusal;
  /** A dry run: what the import would have changed (nothing was written). */
  readonly dryRun?: DryRunReport;
}

export interface ShrinkRefusal {
  /** The operation that would shrink (--replace); absent for --replace-all, which counts the whole store. */
  readonly operation?: string;
  /** Records the store holds now (of that operation). */
  readonly before: number;
  /** Records the store would hold after the import (the file's distinct keys). */
  readonly after: number;
  /** The share, in per cent of `before`, that `after` had to reach. */
  readonly minKeep: number;
}

/** Why an import's input could not be read to its end (a damaged gzip file); nothing was imported. */
export class ImportInputError extends Error {
  constructor(
    message: string,
    /** The file it is about, when an import reads several. */
    readonly file?: string,
  ) {
    super(message);
  }
}

/** The import was stopped (ImportOptions.signal) before it committed; nothing was imported. */
class ImportAborted extends Error {
  constructor() {
    super('the import was interrupted; nothing was imported');
  }
}

export interface ImportOptions {
  /** 'all': every operation; 'named': the operations the file has lines for. */
  readonly replace?: 'all' | 'named';
  /** The bundled sample is being loaded (the store will say it holds only the sample). */
  readonly sample?: boolean;
  /** Worker threads that decode, parse and check (data/workers.ts); 0 (the default) does it on this thread. */
  readonly workers?: number;
  /**
   * Called as the input is read, with the bytes read so far (of the file as stored: compressed bytes for a gzip file).
   */
  readonly onBytes?: (bytes: number) => void;
  /**
   * With a replace: the least share, in per cent of the records the store holds now, that the
   * file must hold (distinct keys) for the replace to commit; a file of no records is refused
   * whenever the store holds any. 'all' counts the whole store, 'named' each operation the file
   * names. Checked after the whole file is read, before commit: a refused import writes nothing.
   * Absent or 0: no check.
   */
  readonly minKeep?: number;
  /** Read and check the whole file and report what would change (DryRunReport), writing nothing. */
  readonly dryRun?: boolean;
  /** Stops the import before it commits (ImportAborted): everything is rolled back. */
  readonly signal?: AbortSignal;
  /**
   * 'ndjson' (the default); 'rdw': RDW's registered-vehicles CSV (data/rdw.ts), one CheckNetherlands
   * record a row; 'ua-mvs': Ukraine's register of registration operations (data/mvs.ts), one
   * CheckUkraine record a plate, its newest operation.
   */
  readonly format?: ImportFormat;
  /** With 'rdw': the fuel data set, read already (data/rdw.ts readFuel), joined to each vehicle by kenteken. */
  readonly fuel?: FuelMap;
  /**
   * When the file's records are as of (ms since the epoch), kept with them for the age of each answer;
   * absent: the time the register's files say they were extracted (format 'ua-mvs'), else the import's.
   */
  readonly asOf?: number;
}

export type ImportFormat = 'ndjson' | 'rdw' | 'ua-mvs';

/** Bytes a file is read in: each read's complete lines go to be parsed as one run. */
const READ_BYTES = 1 << 20;
/**
 * The longest line read as one; a longer one is skipped to its line break and reported (parse.ts refuses over 1 MiB of
 * text).
 */
const MAX_LINE_BYTES = 4 << 20;

/** What the reader hands on: a run of complete lines, or one line too long to read. */
type Run = Uint8Array | { readonly overlong: true };

/**
 * The runs of complete lines of a byte stream, one a chunk read, each a fresh copy the parser may
 * take over (so the chunk may be reused once the next is asked for: importFile reads every chunk
 * into one buffer), with the bytes read so far. A UTF-8 BOM at the start is dropped; a last line
 * without a line break is a line. Lines are cut at LF bytes, which never occur inside a UTF-8
 * multi-byte character.
 */
async function* readRuns(
  input: AsyncIterable<Uint8Array | string>,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<Run> {
  let partial: Uint8Array[] = []; // the line being read, up to the end of the last chunk (copies)
  let partialBytes = 0;
  let bytes = 0;
  let first = true;
  let skipping = false; // inside an overlong line, until its line break
  for await (const raw of input) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    bytes += chunk.length;
    onBytes?.(bytes);
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    if (skipping) {
      const nl = chunk.indexOf(10);
      if (nl === -1) continue;
      skipping = false;
      yield { overlong: true };
      chunk = chunk.subarray(nl + 1);
    }
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      partial.push(chunk.slice());
      partialBytes += chunk.length;
      if (partialBytes > MAX_LINE_BYTES) {
        partial = [];
        partialBytes = 0;
        skipping = true;
      }
      continue;
    }
    yield joined([...partial, chunk.subarray(0, last + 1)], partialBytes + last + 1);
    partial = last + 1 < chunk.length ? [chunk.slice(last + 1)] : [];
    partialBytes = chunk.length - last - 1;
  }
  if (skipping) yield { overlong: true };
  else if (partialBytes > 0) yield joined(partial, partialBytes);
}

/**
 * A file's bytes, every read into the same buffer (readRuns copies what it keeps): an import of
 * a large file then makes no garbage buffer a read, which the heap would only free at its next
 * full collection (tens of MB of RSS).
 */
async function* fileChunks(handle: fs.promises.FileHandle): AsyncGenerator<Uint8Array> {
  const buffer = new Uint8Array(READ_BYTES);
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, READ_BYTES, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
  }
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The input's bytes, decompressed when they start as gzip data does (1f 8b: national data sets come
 * compressed, whatever the file is called), with onBytes called with the bytes read as stored.
 */
async function* inflated(
  input: AsyncIterable<Uint8Array | string>,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<Uint8Array | string> {
  const it = input[Symbol.asyncIterator]();
  let bytes = 0;
  const counted = (c: Uint8Array | string) => {
    bytes += typeof c === 'string' ? Buffer.byteLength(c) : c.length;
    onBytes?.(bytes);
    return c;
  };
  const first = await it.next();
  if (first.done) return;
  const head = counted(first.value);
  if (typeof head === 'string' || head.length < 2 || head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) {
    yield head;
    for (let r = await it.next(); !r.done; r = await it.next()) yield counted(r.value);
    return;
  }
  const gunzip = zlib.createGunzip();
  // Fed from the input (copies: a file's reads reuse one buffer) as fast as it decompresses.
  const feed = (async () => {
    let chunk: Uint8Array | string = head;
    for (;;) {
      if (!gunzip.write(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk)))
        await new Promise<void>((resolve) => gunzip.once('drain', resolve));
      if (gunzip.destroyed) return;
      const r = await it.next();
      if (r.done) break;
      chunk = counted(r.value);
    }
    gunzip.end();
  })().catch((e: Error) => gunzip.destroy(e));
  try {
    for await (const out of gunzip as AsyncIterable<Buffer>) yield out;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (typeof err.code === 'string' && err.code.startsWith('Z_'))
      throw new ImportInputError(`the gzip data is damaged or cut short (${err.message})`);
    throw e;
  } finally {
    gunzip.destroy();
    await feed;
  }
}

/**
 * The input, ended by the signal with ImportAborted even while a read waits (a pipe or FIFO that
 * sends nothing more): the import then rolls back at once.
 */
async function* abortable<T>(input: AsyncIterable<T>, signal?: AbortSignal): AsyncGenerator<T> {
  if (!signal) {
    yield* input;
    return;
  }
  const it = input[Symbol.asyncIterator]();
  let onAbort = () => {};
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ImportAborted());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  stopped.catch(() => undefined);
  try {
    for (;;) {
      const r = await Promise.race([it.next(), stopped]);
      if (r.done) return;
      yield r.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Imports a stream of NDJSON; all or nothing. */
export async function importStream(
  store: VehicleStore,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  return importChunks(store, input as AsyncIterable<Uint8Array | string>, options);
}

/** What an import is to do, decided before it reads a line: what it replaces, what guards it, where it writes. */
interface ImportPlan {
  readonly replaceAll: boolean;
  /** --replace: the operations named so far, each replaced from its first line on (the file is read once). */
  readonly named: string[] | null;
  readonly sampleRemoved: number;
  readonly minKeep: number;
  /** Records held before (counted when a guard or a dry run needs it). */
  readonly before: number;
  /** Records held before per operation (counted when the --replace guard or a dry run needs them). */
  readonly beforeByOperation: Readonly<Record<string, number>>;
  /** A dry run's bookkeeping; null when the import writes. */
  readonly dry: DryRun | null;
  /** The batch written to; null for a dry run. */
  readonly batch: ImportBatch | null;
  /** Lines before the first record of a file (a CSV's header: 1), so that errors name the file's line. */
  readonly firstLine: number;
  /** Fuel parts joined to each record's payload (format 'rdw' with --fuel); null: none. */
  readonly fuel: FuelMap | null;
  /** A key's newest row wins, by its day, whatever the rows' order (format 'ua-mvs'). */
  readonly dated: boolean;
}

/** What reading the file found. */
interface ImportTally {
  lines: number;
  imported: number;
  deleted: number;
  repeated: number;
  invalid: number;
  skipped: number;
  superseded: number;
  /** Keys put whose first line in the file was a put: the records a replace of everything leaves. */
  distinctPuts: number;
  /** The same, per operation: the records a replace of that operation leaves. */
  readonly distinctByOperation: Record<string, number>;
  readonly errors: LineError[];
  readonly byOperation: Record<string, number>;
  readonly withoutPlates: string[];
}

async function planImport(store: VehicleStore, options: ImportOptions): Promise<ImportPlan> {
  // The first import of real data into a store holding only the bundled sample takes its place.
  let sampleRemoved = 0;
  if (!options.sample && (await store.holdsOnlySample())) sampleRemoved = await store.count();
  const replaceAll = options.replace === 'all' || sampleRemoved > 0;
  // The bundled sample is no one's data: replacing it with however few records loses nothing.
  const minKeep = options.replace && sampleRemoved === 0 ? (options.minKeep ?? 0) : 0;
  // Counted before the batch begins: a replacing batch may empty the table at its start.
  const before = (minKeep > 0 && options.replace === 'all') || options.dryRun ? await store.count() : 0;
  const perOperation = (minKeep > 0 && options.replace === 'named') || options.dryRun;
  const beforeByOperation = perOperation ? await store.countByOperation() : {};
  const dry = options.dryRun ? new DryRun(store, sampleRemoved > 0) : null;
  const batch = dry
    ? null
    : await store.beginImport({ replace: replaceAll ? 'all' : undefined, sample: options.sample, asOf: options.asOf });
  const firstLine = options.format === 'rdw' || options.format === 'ua-mvs' ? 1 : 0;
  return {
    replaceAll,
    named: options.replace === 'named' ? [] : null,
    sampleRemoved,
    minKeep,
    before,
    beforeByOperation,
    dry,
    batch,
    firstLine,
    fuel: options.fuel ?? null,
    dated: options.format === 'ua-mvs',
  };
}

function newTally(plan: ImportPlan): ImportTally {
  return {
    lines: plan.firstLine,
    imported: 0,
    deleted: 0,
    repeated: 0,
    invalid: 0,
    skipped: 0,
    superseded: 0,
    distinctPuts: 0,
    distinctByOperation: {},
    errors: [],
    byOperation: {},
    withoutPlates: [],
  };
}

/** The import of what `parse` makes of its runner's threads, all or nothing. */
async function importParsed(
  store: VehicleStore,
  options: ImportOptions,
  parse: (runner: ChunkRunner, tally: ImportTally) => AsyncIterable<PackedChunk>,
): Promise<ImportReport> {
  const plan = await planImport(store, options);
  const { batch } = plan;
  const tally = newTally(plan);
  const runner = chunkRunner(options.workers ?? 0);
  let keys: KeySet;
  try {
    keys = await readAll(store, plan, tally, parse(runner, tally), options.signal);
  } catch (e) {
    // The batch's own failure (a full disk) is what is reported, not a rollback's complaint after it.
    await batch?.rollback().catch(() => undefined);
    throw e;
  } finally {
    await runner.close();
  }
  return settle(plan, tally, keys, options);
}

async function importChunks(
  store: VehicleStore,
  input: AsyncIterable<Uint8Array | string>,
  options: ImportOptions,
): Promise<ImportReport> {
  return importParsed(store, options, (runner, tally) => {
    const bytes = inflated(abortable(input, options.signal), options.onBytes);
    if (options.format === 'ua-mvs') return parsedMvsRuns(oneSource('(stdin)', bytes), runner, tally);
    return options.format === 'rdw' ? parsedRdwRuns(bytes, runner) : parsedRuns(readRuns(bytes), runner);
  });
}

/** Where the reading of the file is: its name and the line last read. */
interface Cursor {
  file: string | undefined;
  line: number;
}

/** Every parsed line into the batch (or, for a dry run, noted against the store), tallied; the keys seen. */
async function readAll(
  store: VehicleStore,
  plan: ImportPlan,
  tally: ImportTally,
  chunks: AsyncIterable<PackedChunk>,
  signal?: AbortSignal,
): Promise<KeySet> {
  const keys = new KeySet(1 << 16, { days: plan.dated, dry: plan.dry !== null });
  const at: Cursor = { file: undefined, line: plan.firstLine };
  for await (const chunk of chunks) {
    if (signal?.aborted) throw new ImportAborted();
    if (chunk.file !== undefined && chunk.file !== at.file) {
      // A file after the first: its lines are numbered from its header again.
      if (at.file !== undefined) tally.lines += plan.firstLine;
      at.file = chunk.file;
      at.line = plan.firstLine;
    }
    let field = 0; // index into ends: 4 a record
    let reason = 0;
    for (let i = 0; i < chunk.kinds.length; i++) {
      at.line++;
      tally.lines++;
      const kind = chunk.kinds[i];
      if (kind === BLANK) continue;
      if (kind === SKIPPED) {
        tally.skipped++;
        continue;
      }
      if (kind === INVALID) {
        // An export's header as the first line of NDJSON: the whole file is of another format.
        if (at.line === 1 && plan.firstLine === 0 && isFormatHint(chunk.reasons[reason]))
          throw new ImportInputError(chunk.reasons[reason], at.file);
        tally.invalid++;
        if (tally.errors.length < MAX_REPORTED)
          tally.errors.push({ line: at.line, reason: chunk.reasons[reason], file: at.file });
        reason++;
        continue;
      }
      field += 4;
      if (tally.invalid > 0) continue; // nothing will be committed; keep checking the rest
      await applyLine(plan, tally, keys, chunk, field - 4, kind === DELETE);
    }
  }
  if (signal?.aborted) throw new ImportAborted();
  return keys;
}

/** One record or deletion (its fields from `at` in the chunk's ends) into the batch, or noted by a dry run. */
async function applyLine(
  plan: ImportPlan,
  tally: ImportTally,
  keys: KeySet,
  chunk: PackedChunk,
  at: number,
  isDelete: boolean,
): Promise<void> {
  const { batch, dry, named, replaceAll, fuel } = plan;
  const { text, ends, hashes, days } = chunk;
  const from = at === 0 ? 0 : ends[at - 1];
  const operation = text.slice(from, ends[at]);
  const registration = text.slice(ends[at], ends[at + 1]);
  const state = text.slice(ends[at + 1], ends[at + 2]);
  if (named && !named.includes(operation)) {
    if (!replaceAll) await batch?.replaceOperation(operation);
    named.push(operation);
  }
  const repeat = keys.addHash(hashes[at >> 1], hashes[(at >> 1) + 1]);
  const slot = keys.slot;
  if (days && keys.day) {
    // A key's newest row wins: an older one read after it is left out; one of the same day is later.
    const day = days[at >> 2];
    if (repeat && day < keys.day[slot]) {
      tally.superseded++;
      return;
    }
    keys.day[slot] = day;
  }
  if (repeat) tally.repeated++;
  const key = { operation, registration, state };
  if (isDelete) {
    await dry?.note(keys, slot, !repeat, key, null);
    await batch?.delete(key);
    tally.deleted++;
    return;
  }
  if (!repeat) {
    tally.distinctPuts++;
    tally.distinctByOperation[operation] = (tally.distinctByOperation[operation] ?? 0) + 1;
  }
  const raw = text.slice(ends[at + 2], ends[at + 3]);
  const payload = fuel ? joinFuel(fuel, registration, raw) : raw;
  await dry?.note(keys, slot, !repeat, key, payload);
  await batch?.put({ operation, registration, state, payload }, !repeat);
  // A register's rows are operations: what it imports is a record a plate, however many rows it had.
  if (repeat && days) return;
  tally.imported++;
  tally.byOperation[operation] = (tally.byOperation[operation] ?? 0) + 1;
}

/** Why a replace would shrink the store past --min-keep, or undefined. */
function shrinkOf(plan: ImportPlan, tally: ImportTally): ShrinkRefusal | undefined {
  const { minKeep, before, named, beforeByOperation } = plan;
  const shrinks = (after: number, held: number) => held > 0 && (after === 0 || after * 100 < held * minKeep);
  if (minKeep <= 0) return undefined;
  if (!named) return shrinks(tally.distinctPuts, before) ? { before, after: tally.distinctPuts, minKeep } : undefined;
  for (const operation of named) {
    const after = tally.distinctByOperation[operation] ?? 0;
    const held = beforeByOperation[operation] ?? 0;
    if (shrinks(after, held)) return { operation, before: held, after, minKeep };
  }
  return undefined;
}

/**
 * The end of an import: rolled back (invalid lines, a dry run, a refused shrink, an interrupt) or committed, and its
 * report.
 */
async function settle(
  plan: ImportPlan,
  tally: ImportTally,
  keys: KeySet,
  options: ImportOptions,
): Promise<ImportReport> {
  const { batch, dry, before, named, replaceAll, sampleRemoved } = plan;
  const { lines, imported, deleted, repeated, byOperation, errors, invalid, skipped, superseded, withoutPlates } =
    tally;
  const common = { lines, errors, invalid, ...(plan.dated ? { skipped, superseded, withoutPlates } : {}) };
  if (invalid > 0) {
    await batch?.rollback();
    countImport(0, false);
    const dryRun = dry ? dry.report(new KeySet(16, { dry: true }), before, {}, () => false) : undefined;
    return {
      ...common,
      imported: 0,
      deleted: 0,
      repeated: 0,
      byOperation: {},
      committed: false,
      replaced: null,
      sampleRemoved: 0,
      dryRun,
    };
  }
  const replace: Replace | null = named ?? (options.replace === 'all' ? 'all' : null);
  const shrinkRefused = shrinkOf(plan, tally);
  const counts = { imported, deleted, repeated, byOperation, replaced: replace, sampleRemoved };
  if (dry || shrinkRefused) {
    await batch?.rollback();
    const replaces = (op: string) => replaceAll || (named?.includes(op) ?? false);
    const dryRun = dry?.report(keys, before, plan.beforeByOperation, replaces);
    return { ...common, ...counts, committed: false, shrinkRefused, dryRun };
  }
  if (!batch) throw new Error('unreachable: an import that writes has a batch');
  if (options.signal?.aborted) {
    await batch.rollback().catch(() => undefined);
    throw new ImportAborted();
  }
  await batch.commit();
  countImport(imported, true);
  return { ...common, ...counts, committed: true };
}

/** Runs parsed by the runner, a few ahead of the writer, handed on in the file's order. */
async function* parsedRuns(runs: AsyncIterable<Run>, runner: ChunkRunner): AsyncGenerator<PackedChunk> {
  const ahead: Promise<PackedChunk>[] = [];
  for await (const run of runs) {
    ahead.push(
      run instanceof Uint8Array
        ? runner.run(run)
        : Promise.resolve(overlongLine(`line is longer than ${MAX_LINE_BYTES} bytes`)),
    );
    if (ahead.length >= MAX_AHEAD) yield await (ahead.shift() as Promise<PackedChunk>);
  }
  while (ahead.length > 0) yield await (ahead.shift() as Promise<PackedChunk>);
}

/**
 * RDW's vehicles CSV (format 'rdw') cut into runs of whole rows, its header read here and handed
 * with every run to the runner, which parses and maps rows as it does NDJSON lines.
 */
async function* parsedRdwRuns(
  input: AsyncIterable<Uint8Array | string>,
  runner: ChunkRunner,
): AsyncGenerator<PackedChunk> {
  const ahead: Promise<PackedChunk>[] = [];
  let columns: string[] | null = null;
  try {
    for await (let run of csvRuns(input)) {
      if (columns === null) {
        const header = splitHeader(run);
        const problem = vehicleHeaderProblem(header.columns);
        if (problem) throw new ImportInputError(problem);
        columns = header.columns;
        run = header.rest;
        if (run.length === 0) continue;
      }
      ahead.push(runner.run(run, columns));
      if (ahead.length >= MAX_AHEAD) yield await (ahead.shift() as Promise<PackedChunk>);
    }
  } catch (e) {
    if (e instanceof CsvInputError) throw new ImportInputError(e.message);
    throw e;
  }
  while (ahead.length > 0) yield await (ahead.shift() as Promise<PackedChunk>);
}

/**
 * Runs in flight at most: enough to keep the threads busy while the writer writes, and no more (memory: ~1 MB a run,
 * and its outcomes).
 */
const MAX_AHEAD = 4;

/** One CSV file of an import that reads several: its name (for errors) and its bytes, decompressed. */
interface Source {
  readonly name: string;
  readonly bytes: AsyncIterable<Uint8Array | string>;
}

async function* oneSource(name: string, bytes: AsyncIterable<Uint8Array | string>): AsyncGenerator<Source> {
  yield { name, bytes };
}

/**
 * Ukraine's register (format 'ua-mvs') cut into runs of whole rows, file after file: each file's
 * header read here (its layout, and its encoding from its first rows), the runs parsed by the runner
 * and handed on in order, each with its file's name.
 */
async function* parsedMvsRuns(
  sources: AsyncIterable<Source>,
  runner: ChunkRunner,
  tally: ImportTally,
): AsyncGenerator<PackedChunk> {
  const ahead: Promise<PackedChunk>[] = [];
  let name: string | undefined;
  try {
    for await (const source of sources) {
      const file = (name = source.name);
      let layout: MvsLayout | null = null;
      let encoded = false;
      for await (let run of csvRuns(source.bytes)) {
        if (layout === null) {
          if (isZip(run))
            throw new ImportInputError(
              'a ZIP archive is read from a file, not from standard input (its directory is at its end)',
              file,
            );
          const header = mvsHeader(run);
          layout = header.layout;
          if (layout.at.N_REG_NEW === -1) tally.withoutPlates.push(file);
          run = header.rest;
          if (run.length === 0) continue;
        }
        if (!encoded) [layout, encoded] = [withEncoding(layout, run), true];
        ahead.push(runner.run(run, undefined, layout).then((c) => ({ ...c, file })));
        if (ahead.length >= MAX_AHEAD) yield await (ahead.shift() as Promise<PackedChunk>);
      }
      if (layout === null) throw new ImportInputError('it is empty (no header row)', file);
    }
  } catch (e) {
    if (e instanceof CsvInputError || e instanceof MvsHeaderError || e instanceof ZipError)
      throw new ImportInputError(e.message, name);
    throw e;
  }
  while (ahead.length > 0) yield await (ahead.shift() as Promise<PackedChunk>);
}

/**
 * The CSV files of Ukraine's register as given: a ZIP's CSV entries (data/zip.ts), a gzip-compressed
 * or plain CSV file; `onBytes` is told the bytes read of all the files together, as stored.
 */
async function* fileSources(
  files: readonly string[],
  handles: readonly fs.promises.FileHandle[],
  options: ImportOptions,
): AsyncGenerator<Source> {
  let base = 0;
  for (let i = 0; i < files.length; i++) {
    const [file, handle] = [files[i], handles[i]];
    const { size } = await handle.stat();
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (isZip(head)) {
      let read = base;
      const count = (n: number) => options.onBytes?.((read += n));
      let entries;
      try {
        entries = csvEntries(await zipEntries(handle, size));
      } catch (e) {
        throw e instanceof ZipError ? new ImportInputError(e.message, file) : e;
      }
      for (const entry of entries)
        yield {
          name: entries.length > 1 ? `${file}:${entry.name}` : file,
          bytes: abortable(zipEntryBytes(handle, entry, count), options.signal),
        };
    } else {
      const from = base;
      yield {
        name: file,
        bytes: inflated(abortable(fileChunks(handle), options.signal), (b) => options.onBytes?.(from + b)),
      };
    }
    base += size;
  }
}

/**
 * When the register's files were extracted: the newest time their archives' CSV entries were written
 * (mvsWrittenAt), the register holding every operation up to then; null when a file is not a ZIP
 * (a CSV carries no time) or its directory cannot be read (fileSources then says why).
 */
async function mvsExtractedAt(handles: readonly fs.promises.FileHandle[]): Promise<number | null> {
  let newest: number | null = null;
  for (const handle of handles) {
    const { size } = await handle.stat();
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (!isZip(head)) return null;
    let entries;
    try {
      entries = csvEntries(await zipEntries(handle, size));
    } catch {
      return null;
    }
    for (const e of entries) newest = Math.max(newest ?? 0, mvsWrittenAt(e));
  }
  return newest;
}

/**
 * Imports one or more files of Ukraine's register (format 'ua-mvs'), each a ZIP as published or a
 * CSV (plain or gzip-compressed), as one import: all or nothing, a plate's newest operation winning
 * across the files whatever their order.
 */
export async function importFiles(
  store: VehicleStore,
  files: readonly string[],
  options: ImportOptions = {},
): Promise<ImportReport> {
  // Opened before the store's batch begins, so that a missing file fails before anything is written.
  const handles: fs.promises.FileHandle[] = [];
  try {
    for (const file of files) handles.push(await fs.promises.open(file, 'r'));
    const asOf = options.asOf ?? (await mvsExtractedAt(handles)) ?? undefined;
    return await importParsed(store, { ...options, format: 'ua-mvs', asOf }, (runner, tally) =>
      parsedMvsRuns(fileSources(files, handles, options), runner, tally),
    );
  } finally {
    for (const h of handles) {
      if (options.signal?.aborted) void h.close().catch(() => undefined);
      else await h.close();
    }
  }
}

export async function importFile(
  store: VehicleStore,
  file: string,
  options: ImportOptions = {},
): Promise<ImportReport> {
  if (options.format === 'ua-mvs') return importFiles(store, [file], options);
  // Opened before the store's batch begins, so that a missing file fails as it did with a stream.
  const handle = await fs.promises.open(file, 'r');
  try {
    return await importChunks(store, fileChunks(handle), options);
  } finally {
    // Stopped while a read waits (a FIFO): close() would wait for that read; the process is ending.
    if (options.signal?.aborted) void handle.close().catch(() => undefined);
    else await handle.close();
  }
}

/**
 * RDW's fuel CSV (8ys7-d773, plain or gzip-compressed) read whole into the map an 'rdw' import
 * joins by kenteken (data/rdw.ts); before the import's batch begins, so that nothing waits on it.
 */
export async function readFuelFile(
  file: string,
  onBytes?: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<FuelMap> {
  const handle = await fs.promises.open(file, 'r');
  try {
    return await readFuel(inflated(abortable(fileChunks(handle), signal), onBytes));
  } catch (e) {
    if (e instanceof CsvInputError) throw new ImportInputError(e.message);
    throw e;
  } finally {
    await handle.close();
  }
}
