// NDJSON import, a use-case over the store: every line is checked (strict keys); records are
// written into one store batch as they are read (so memory stays flat), and the batch commits only
// if no line was invalid. A replacing import (--replace, --replace-all) makes the store hold
// exactly the file's records for the operations it replaces; readers see the old data set until
// the commit and the new one after it.

import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { countImport } from '../ops/metrics';
import { updatePrepared, type PreparedForms, type Replace, type VehicleStore } from '../store/store';
import { KeySet } from './keyset';
import type { LineOutcome } from './parse';
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
  /** Each record's answers are made as it is written (transport/prepared.ts). */
  readonly forms?: PreparedForms;
  /** 'all': every operation; 'named': the operations the file has lines for. */
  readonly replace?: 'all' | 'named';
  /** The bundled sample is being loaded (the store will say it holds only the sample). */
  readonly sample?: boolean;
  /** Worker threads that parse and prepare (data/workers.ts); 0 (the default) does it on this thread. */
  readonly workers?: number;
  /** Called as the input is read, with the bytes read so far. */
  readonly onBytes?: (bytes: number) => void;
}

/**
 * The lines of a byte stream, decoded as UTF-8 (a BOM at the start dropped), with the bytes read
 * so far. Splitting large chunks by hand is several times cheaper than readline's per-line events.
 */
export async function* readLines(input: Readable, onBytes?: (bytes: number) => void): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let bytes = 0;
  let first = true;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
      bytes += Buffer.byteLength(chunk);
    } else {
      text = decoder.write(chunk);
      bytes += chunk.length;
    }
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    onBytes?.(bytes);
    let from = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      rest += text;
      continue;
    }
    yield stripCr(rest + text.slice(0, nl));
    rest = '';
    from = nl + 1;
    while ((nl = text.indexOf('\n', from)) !== -1) {
      yield stripCr(text.slice(from, nl));
      from = nl + 1;
    }
    rest = text.slice(from);
  }
  rest += decoder.end();
  if (rest !== '') yield stripCr(rest);
}

function stripCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/**
 * Imports a stream of NDJSON; all or nothing. With forms, each record's answers are made as it is
 * written; if the store held records prepared under another version, all are made anew.
 */
export async function importStream(store: VehicleStore, input: Readable, options: ImportOptions = {}): Promise<ImportReport> {
  const forms = options.forms;
  let replace: Replace | null = options.replace === 'all' ? 'all' : null;
  // --replace: each operation is replaced from its first line on (the file is read once).
  const named: string[] | null = options.replace === 'named' ? [] : null;
  // The first import of real data into a store holding only the bundled sample takes its place.
  let sampleRemoved = 0;
  if (!options.sample && (await store.holdsOnlySample())) sampleRemoved = await store.count();
  const replaceAll = replace === 'all' || sampleRemoved > 0;
  const current = forms !== undefined && (replaceAll || (await store.isEmpty()) || (await store.preparedVersion()) === forms.version);
  const batch = await store.beginImport({ replace: replaceAll ? 'all' : undefined, sample: options.sample });
  const errors: LineError[] = [];
  const byOperation: Record<string, number> = {};
  const seen = new KeySet();
  const runner = chunkRunner(options.workers ?? 0, forms);
  let n = 0;
  let imported = 0;
  let deleted = 0;
  let repeated = 0;
  let invalid = 0;
  try {
    for await (const outcomes of parsedChunks(readLines(input, options.onBytes), runner)) {
      for (const parsed of outcomes) {
        n++;
        if (parsed === null) continue;
        if (!parsed.ok) {
          invalid++;
          if (errors.length < MAX_REPORTED) errors.push({ line: n, reason: parsed.reason });
          continue;
        }
        if (invalid > 0) continue; // nothing will be committed; keep checking the rest
        const r = parsed.record;
        if (named && !named.includes(r.operation)) {
          if (!replaceAll) await batch.replaceOperation(r.operation);
          named.push(r.operation);
        }
        if (seen.addSeen(`${r.operation}\u0001${r.registration}\u0001${r.state}`)) repeated++;
        if (parsed.delete) {
          await batch.delete(r);
          deleted++;
          continue;
        }
        await batch.put(parsed.record);
        imported++;
        byOperation[r.operation] = (byOperation[r.operation] ?? 0) + 1;
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
  await batch.commit(current ? { preparedVersion: forms.version } : undefined);
  if (named) replace = named;
  // Records whose answers a trigger dropped (see store/sqlite.ts) or that had none get them here;
  // all of them, if the store's were made under another version.
  if (forms) await updatePrepared(store, forms);
  countImport(imported, true);
  return { lines: n, imported, deleted, repeated, byOperation, errors, invalid, committed: true, replaced: replace, sampleRemoved };
}

/** Lines in runs of CHUNK_LINES, parsed by the runner, a few runs ahead of the writer, in order. */
const CHUNK_LINES = 500;

async function* parsedChunks(lines: AsyncIterable<string>, runner: ChunkRunner): AsyncGenerator<LineOutcome[]> {
  const ahead: Promise<LineOutcome[]>[] = [];
  let chunk: string[] = [];
  for await (const line of lines) {
    chunk.push(line);
    if (chunk.length < CHUNK_LINES) continue;
    ahead.push(runner.run(chunk));
    chunk = [];
    if (ahead.length >= MAX_AHEAD) yield await (ahead.shift() as Promise<LineOutcome[]>);
  }
  if (chunk.length > 0) ahead.push(runner.run(chunk));
  while (ahead.length > 0) yield await (ahead.shift() as Promise<LineOutcome[]>);
}

/** Runs in flight at most: enough to keep the threads busy while the writer writes, and no more (memory). */
const MAX_AHEAD = 4;

export async function importFile(store: VehicleStore, file: string, options: ImportOptions = {}): Promise<ImportReport> {
  return importStream(store, fs.createReadStream(file, { highWaterMark: 1 << 20 }), options);
}
