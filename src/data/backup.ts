// Backup: a consistent copy of the whole store (records, accounts, usage; the upstream cache only when asked) taken
// while it serves, by the store's own means (SQLite's online backup, of each of its two files). Each file is written
// under a temporary name and renamed when every one is complete, the file named last, so a file at the given name is
// always a whole backup.

import fs from 'node:fs';
import path from 'node:path';
import type { Progress, VehicleStore } from '../store/store';

export class BackupError extends Error {}

/** What backup and export say of a file already there: the same words, the same way out. */
export function existsMessage(dest: string): string {
  return `${dest} already exists; give a new file name, or --force to overwrite it`;
}

/**
 * `force`: files already at the backup's names are replaced (only once the copy is whole); otherwise they are refused.
 * `withCache`: the upstream cache's answers are kept in the copy (left out otherwise). Returns the files written.
 */
export async function backupStore(
  store: VehicleStore,
  dest: string,
  progress?: Progress,
  options: { force?: boolean; withCache?: boolean } = {},
): Promise<readonly string[]> {
  if (!store.backup || !store.backupFiles)
    throw new BackupError('this store has no backup of its own; use its database tools (PostgreSQL: pg_dump)');
  const files = store.backupFiles(dest);
  const there = files.find((f) => fs.existsSync(f));
  if (there !== undefined && !options.force) throw new BackupError(existsMessage(there));
  const dir = path.dirname(path.resolve(dest));
  if (!fs.existsSync(dir)) throw new BackupError(`the folder ${dir} does not exist; create it first (mkdir -p ${dir})`);
  const partials = files.map((f) => `${f}.partial-${process.pid}`);
  try {
    await store.backup(partials, progress, { withCache: options.withCache });
    // `dest` goes first and comes back last: while it is there, so is the rest of its backup.
    fs.rmSync(dest, { force: true });
    for (let i = files.length - 1; i >= 0; i--) fs.renameSync(partials[i], files[i]);
  } finally {
    for (const p of partials) fs.rmSync(p, { force: true });
  }
  return files;
}
