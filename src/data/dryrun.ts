// What `import --dry-run` says a refresh would change, per operation: records added, changed (the
// store holds the key with another payload), unchanged, and removed (by deletion lines, or as records
// of a replaced operation that the file does not hold). Each key's first line asks the store what it
// holds there; what the file leaves under the key is known only at its end (a later line, or a newer
// operation of Ukraine's register, may win), so it is kept beside the key in the import's key table
// (keyset.ts: three bytes and a hash of the payload the store held) and counted once the file is read.

import type { RecordKey, VehicleStore } from '../store/store';
import { textHash, type KeySet } from './keyset';

/** The store held a record under the key before the import. */
const HELD = 1;
/** The file's last word on the key is a record (not a deletion). */
const PUT = 2;
/** ... and its payload is the one the store holds. */
const EQUAL = 4;

export interface OperationChange {
  readonly added: number;
  readonly changed: number;
  readonly unchanged: number;
  readonly removed: number;
}

export interface DryRunReport {
  /** Records the store holds now. */
  readonly before: number;
  /** Keys the file puts that the store does not hold. */
  readonly added: number;
  /** Keys the file puts that the store holds already (changed + unchanged). */
  readonly replaced: number;
  /** Of those, the ones whose record the file changes. */
  readonly changed: number;
  /** Of those, the ones the file leaves as they are. */
  readonly unchanged: number;
  /** Records that would go: by deletion lines, and every record of a replaced operation the file does not put. */
  readonly removed: number;
  /** The same counts per operation, for every operation the import would touch. */
  readonly operations: Readonly<Record<string, OperationChange>>;
}

export class DryRun {
  private readonly operations: string[] = [];

  /**
   * `removesAll`: the import empties the store before its first line (the bundled sample data giving way to the first
   * real data), so a key the store holds now is not replaced but removed, and the file's record under it is new.
   */
  constructor(
    private readonly store: VehicleStore,
    private readonly removesAll = false,
  ) {}

  /**
   * Notes a line applied under `key` (its slot in `keys`, `fresh` when it is the key's first line):
   * a record with `payload`, or a deletion (null).
   */
  async note(keys: KeySet, slot: number, fresh: boolean, key: RecordKey, payload: string | null): Promise<void> {
    const state = keys.state as Uint8Array;
    const stored = keys.stored as Uint32Array;
    if (fresh) {
      const held = this.removesAll ? null : await this.store.get(key);
      state[slot] = held ? HELD : 0;
      stored[slot] = held ? textHash(held.payload) : 0;
      let op = this.operations.indexOf(key.operation);
      if (op === -1) op = this.operations.push(key.operation) - 1;
      (keys.operation as Uint8Array)[slot] = op;
    }
    const held = state[slot] & HELD;
    if (payload === null) state[slot] = held;
    else state[slot] = held | PUT | (held && textHash(payload) === stored[slot] ? EQUAL : 0);
  }

  /**
   * The report, once the file is read: `before` and `beforeByOperation` are what the store held when
   * the import began, `replaces` tells whether an operation's records not in the file would go.
   */
  report(
    keys: KeySet,
    before: number,
    beforeByOperation: Readonly<Record<string, number>>,
    replaces: (operation: string) => boolean,
  ): DryRunReport {
    const ops: Record<string, { added: number; changed: number; unchanged: number; removed: number; kept: number }> =
      {};
    const of = (op: string) => (ops[op] ??= { added: 0, changed: 0, unchanged: 0, removed: 0, kept: 0 });
    const state = keys.state as Uint8Array;
    const opIndex = keys.operation as Uint8Array;
    for (const slot of keys.slots()) {
      const s = state[slot];
      const c = of(this.operations[opIndex[slot]]);
      if (!(s & PUT)) c.removed += s & HELD;
      else if (!(s & HELD)) c.added++;
      else if (s & EQUAL) c.unchanged++;
      else c.changed++;
      if (s & PUT && s & HELD) c.kept++;
    }
    for (const [op, n] of Object.entries(beforeByOperation)) if (replaces(op)) of(op).removed = n - of(op).kept;
    const operations: Record<string, OperationChange> = {};
    const total = { added: 0, changed: 0, unchanged: 0, removed: 0 };
    for (const op of Object.keys(ops).sort()) {
      const { added, changed, unchanged, removed } = ops[op];
      operations[op] = { added, changed, unchanged, removed };
      total.added += added;
      total.changed += changed;
      total.unchanged += unchanged;
      total.removed += removed;
    }
    return { before, ...total, replaced: total.changed + total.unchanged, operations };
  }
}
