// Backup: a consistent copy of the whole store (records, accounts, usage; the upstream cache only when asked) taken
// while it serves,
// by the store's own means (SQLite's online backup). The copy is written under a temporary name
// and renamed when complete, so a file at the given name is always a whole backup.

import fs from 'node:fs';
import path from 'node:path';
import type { Progress, VehicleStore } from '../store/store';

export class BackupError extends Error {}

/** What backup and export say of a file already there: the same words, the same way out. */
export function existsMessage(dest: string): string {
  return `${dest} already exists; give a new file name, or --force to overwrite it`;
}

/** `force`: a file already at `dest` is replaced (only once the copy is whole); otherwise it is refused. */
/** `withCache`: the upstream cache's answers are kept in the copy (left out otherwise). */
export async function backupStore(store: VehicleStore, dest: string, progress?: Progress, options: { force?: boolean; withCache?: boolean } = {}): Promise<void> {
  if (!store.backup) throw new BackupError('this store has no backup of its own; use its database tools (PostgreSQL: pg_dump)');
  if (fs.existsSync(dest) && !options.force) throw new BackupError(existsMessage(dest));
  const dir = path.dirname(path.resolve(dest));
  if (!fs.existsSync(dir)) throw new BackupError(`the folder ${dir} does not exist; create it first (mkdir -p ${dir})`);
  const partial = `${dest}.partial-${process.pid}`;
  try {
    await store.backup(partial, progress, { withCache: options.withCache });
    fs.renameSync(partial, dest);
  } finally {
    fs.rmSync(partial, { force: true });
  }
}
