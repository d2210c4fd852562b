// NDJSON import, a use-case over the store: every line is checked (strict keys); records are
// written into one store batch as they are read (so memory stays flat), and the batch commits only
// if no line was invalid. A replacing import (--replace, --replace-all) makes the store hold
// exactly the file's records for the operations it replaces; readers see the old data set until
// the commit and the new one after it.

import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { countImport } from '../ops/metrics';
import type { Replace, VehicleStore } from '../store/store';
import { BLANK, DELETE, INVALID, overlongLine, type PackedChunk } from './chunk';
import { KeySet } from './keyset';
import { chunkRunner, type ChunkRunner } from './workers';

export { parseLine } from './parse';

/** How many bad lines are reported before the rest are only counted. */
const MAX_REPORTED = 50;

export interface LineError {
  readonly line: number;
  readonly reason: string;
}

export interface ImportReport {
  readonly lines: number;
  /** Records written (put), repeats included. */
  readonly imported: number;
  /** Deletion lines applied (a key that was not there counts too). */
  readonly deleted: number;
  /** Lines whose key an earlier line of the same file already had: the later line won. */
  readonly repeated: number;
  readonly byOperation: Readonly<Record<string, number>>;
  readonly errors: readonly LineError[];
  /** Invalid lines, including those past the reporting cap. */
  readonly invalid: number;
  readonly committed: boolean;
  /** What the import replaced: the operations given, or 'all'; null for an ordinary import. */
  readonly replaced: Replace | null;
  /** Records of the bundled sample removed because this was the first import of real data (0 if none). */
  readonly sampleRemoved: number;
}

export interface ImportOptions {
  /** 'all': every operation; 'named': the operations the file has lines for. */
  readonly replace?: 'all' | 'named';
  /** The bundled sample is being loaded (the store will say it holds only the sample). */
  readonly sample?: boolean;
  /** Worker threads that decode, parse and check (data/workers.ts); 0 (the default) does it on this thread. */
  readonly workers?: number;
  /** Called as the input is read, with the bytes read so far. */
  readonly onBytes?: (bytes: number) => void;
}

/** Bytes a file is read in: each read's complete lines go to be parsed as one run. */
const READ_BYTES = 1 << 20;
/** The longest line read as one; a longer one is skipped to its line break and reported (parse.ts refuses over 1 MiB of text). */
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
export async function* readRuns(input: AsyncIterable<Uint8Array | string>, onBytes?: (bytes: number) => void): AsyncGenerator<Run> {
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

function joined(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
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

/** Imports a stream of NDJSON; all or nothing. */
export async function importStream(store: VehicleStore, input: Readable, options: ImportOptions = {}): Promise<ImportReport> {
  return importChunks(store, input as AsyncIterable<Uint8Array | string>, options);
}

async function importChunks(store: VehicleStore, input: AsyncIterable<Uint8Array | string>, options: ImportOptions): Promise<ImportReport> {
  let replace: Replace | null = options.replace === 'all' ? 'all' : null;
  // --replace: each operation is replaced from its first line on (the file is read once).
  const named: string[] | null = options.replace === 'named' ? [] : null;
  // The first import of real data into a store holding only the bundled sample takes its place.
  let sampleRemoved = 0;
  if (!options.sample && (await store.holdsOnlySample())) sampleRemoved = await store.count();
  const replaceAll = replace === 'all' || sampleRemoved > 0;
  const batch = await store.beginImport({ replace: replaceAll ? 'all' : undefined, sample: options.sample });
  const errors: LineError[] = [];
  const byOperation: Record<string, number> = {};
  const seen = new KeySet();
  const runner = chunkRunner(options.workers ?? 0);
  let n = 0;
  let imported = 0;
  let deleted = 0;
  let repeated = 0;
  let invalid = 0;
  try {
    for await (const chunk of parsedRuns(readRuns(input, options.onBytes), runner)) {
      const { kinds, text, ends, hashes, reasons } = chunk;
      let field = 0; // index into ends: 4 a record
      let reason = 0;
      for (let i = 0; i < kinds.length; i++) {
        n++;
        const kind = kinds[i];
        if (kind === BLANK) continue;
        if (kind === INVALID) {
          invalid++;
          if (errors.length < MAX_REPORTED) errors.push({ line: n, reason: reasons[reason] });
          reason++;
          continue;
        }
        const at = field;
        field += 4;
        if (invalid > 0) continue; // nothing will be committed; keep checking the rest
        const from = at === 0 ? 0 : ends[at - 1];
        const operation = text.slice(from, ends[at]);
        const registration = text.slice(ends[at], ends[at + 1]);
        const state = text.slice(ends[at + 1], ends[at + 2]);
        if (named && !named.includes(operation)) {
          if (!replaceAll) await batch.replaceOperation(operation);
          named.push(operation);
        }
        const repeat = seen.addHash(hashes[at >> 1], hashes[(at >> 1) + 1]);
        if (repeat) repeated++;
        if (kind === DELETE) {
          await batch.delete({ operation, registration, state });
          deleted++;
          continue;
        }
        await batch.put({ operation, registration, state, payload: text.slice(ends[at + 2], ends[at + 3]) }, !repeat);
        imported++;
        byOperation[operation] = (byOperation[operation] ?? 0) + 1;
      }
    }
  } catch (e) {
    await batch.rollback();
    throw e;
  } finally {
    await runner.close();
  }
  if (invalid > 0) {
    await batch.rollback();
    countImport(0, false);
    return { lines: n, imported: 0, deleted: 0, repeated: 0, byOperation: {}, errors, invalid, committed: false, replaced: null, sampleRemoved: 0 };
  }
  await batch.commit();
  if (named) replace = named;
  countImport(imported, true);
  return { lines: n, imported, deleted, repeated, byOperation, errors, invalid, committed: true, replaced: replace, sampleRemoved };
}

/** Runs parsed by the runner, a few ahead of the writer, handed on in the file's order. */
async function* parsedRuns(runs: AsyncIterable<Run>, runner: ChunkRunner): AsyncGenerator<PackedChunk> {
  const ahead: Promise<PackedChunk>[] = [];
  for await (const run of runs) {
    ahead.push(run instanceof Uint8Array ? runner.run(run) : Promise.resolve(overlongLine(`line is longer than ${MAX_LINE_BYTES} bytes`)));
    if (ahead.length >= MAX_AHEAD) yield await (ahead.shift() as Promise<PackedChunk>);
  }
  while (ahead.length > 0) yield await (ahead.shift() as Promise<PackedChunk>);
}

/** Runs in flight at most: enough to keep the threads busy while the writer writes, and no more (memory: ~1 MB a run, and its outcomes). */
const MAX_AHEAD = 4;

export async function importFile(store: VehicleStore, file: string, options: ImportOptions = {}): Promise<ImportReport> {
  // Opened before the store's batch begins, so that a missing file fails as it did with a stream.
  const handle = await fs.promises.open(file, 'r');
  try {
    return await importChunks(store, fileChunks(handle), options);
  } finally {
    await handle.close();
  }
}
