// A run of an import file's bytes -> its lines' outcomes, packed for the trip back from a worker
// thread: one string holding every record's key and payload, typed arrays of offsets, kinds and key
// hashes (moved, not copied), and the few errors as objects. Structured-cloning an object per
// record cost the writer more than writing it; slicing one string costs next to nothing. Pure, so
// the import runs the same code on its own thread when it has no worker threads.

import { parseLine } from './parse';
import { keyHash } from './keyset';

/** What became of a line. */
export const BLANK = 0;
export const PUT = 1;
export const DELETE = 2;
export const INVALID = 3;
/** A row the format leaves out, counted (a register's row without a plate: data/mvs.ts). */
export const SKIPPED = 4;

export interface PackedChunk {
  /** One per line of the run, in order: BLANK, PUT, DELETE, INVALID or SKIPPED. */
  readonly kinds: Uint8Array;
  /** Each put's and delete's fields, one after another: operation, registration, state, payload ('' for a delete). */
  readonly text: string;
  /** Four end offsets into text per put or delete (operation, registration, state, payload). */
  readonly ends: Int32Array;
  /** Two 32-bit halves of each put's and delete's key hash (keyset.ts), for the repeated-key count. */
  readonly hashes: Uint32Array;
  /** Why each INVALID line was refused, in line order. */
  readonly reasons: string[];
  /**
   * Each put's day (days since 1970-01-01), for a format whose newest row of a key wins whatever
   * the order of its rows (data/mvs.ts); absent: the file's last line of a key wins.
   */
  readonly days?: Uint16Array;
  /** The file the run is from, when an import reads several (its lines are numbered from 1 again). */
  readonly file?: string;
}

// ignoreBOM: a BOM is dropped only at the very start of the file (readRuns), not at the start of
// every run, where it would make whether a line imports depend on where the reads fell.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The lines of `bytes` (complete lines: the caller cuts runs at a line break; a last line without
 * one is the file's last), decoded as UTF-8 (malformed bytes become U+FFFD), CR before LF dropped.
 */
export function packLines(bytes: Uint8Array): PackedChunk {
  const all = decoder.decode(bytes);
  const lines = all.split('\n');
  // A run ends with its line break: the empty piece after it is not a line.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const kinds = new Uint8Array(lines.length);
  const ends: number[] = [];
  const hashes: number[] = [];
  const reasons: string[] = [];
  let text = '';
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    if (line.trim() === '') {
      kinds[i] = BLANK;
      continue;
    }
    const p = parseLine(line);
    if (!p.ok) {
      kinds[i] = INVALID;
      reasons.push(p.reason);
      continue;
    }
    const r = p.record;
    kinds[i] = p.delete ? DELETE : PUT;
    text += r.operation;
    ends.push(text.length);
    text += r.registration;
    ends.push(text.length);
    text += r.state;
    ends.push(text.length);
    if (!p.delete) text += p.record.payload;
    ends.push(text.length);
    const [a, b] = keyHash(r.operation, r.registration, r.state);
    hashes.push(a, b);
  }
  return { kinds, text, ends: Int32Array.from(ends), hashes: Uint32Array.from(hashes), reasons };
}

/** A line too long to be read as one (the reader skipped it): one INVALID line. */
export function overlongLine(reason: string): PackedChunk {
  return {
    kinds: Uint8Array.of(INVALID),
    text: '',
    ends: new Int32Array(0),
    hashes: new Uint32Array(0),
    reasons: [reason],
  };
}

/**
 * The parts copied into one fresh array of `length` bytes (its own memory, never a pool's: it may be handed to a
 * worker).
 */
export function joined(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
