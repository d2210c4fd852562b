// SQLite allows one writer per database file, and better-sqlite3 waits for the write lock
// synchronously: with a busy_timeout the whole event loop stops while another process holds it
// (another instance's charges, a `users` command, another import), health checks and unmetered
// lookups included. So the serving connection has no
// busy_timeout, and a write that finds the lock taken waits here instead, asynchronously, retrying
// with a growing pause, for at most LOCK_WAIT_MS (the bound the README states); past that it fails
// as StoreUnavailableError and nothing was written. A write that fails for want of disk
// (SQLITE_FULL) or on an I/O error fails the same way, so that its caller is answered
// SERVICE_UNAVAILABLE and charged nothing.

import { StoreUnavailableError } from './store';

/** Longest a write waits for another connection's write lock. */
const LOCK_WAIT_MS = 5000;
const FIRST_PAUSE_MS = 2;
const LONGEST_PAUSE_MS = 50;

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** SQLITE_BUSY (and its extended codes) or SQLITE_LOCKED: another connection holds what this write needs. */
export function isBusy(e: unknown): boolean {
  const code = codeOf(e);
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/**
 * The store's failure as the operator should read it: a full disk or an I/O error as StoreUnavailableError, anything
 * else as it was.
 */
function sqliteFailure(e: unknown, file: string): unknown {
  const code = codeOf(e);
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return new StoreUnavailableError(
      'SQLite',
      `the disk holding ${file} is full: nothing was written; free space, then retry`,
      'cannot write: its disk is full',
    );
  }
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY_')) {
    return new StoreUnavailableError(
      'SQLite',
      `${file} cannot be written (${code}): nothing was written`,
      'cannot write',
    );
  }
  return e;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `write` (synchronous, one statement or one transaction) once the write lock can be had:
 * at once when it is free, otherwise retried until `waitMs` has passed. A failure other than a
 * busy lock is thrown at once, translated by sqliteFailure.
 */
export async function withWriteLock<T>(write: () => T, file: string, waitMs = LOCK_WAIT_MS): Promise<T> {
  let deadline = 0;
  let wait = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return write();
    } catch (e) {
      if (!isBusy(e)) throw sqliteFailure(e, file);
    }
    const now = Date.now();
    if (deadline === 0) deadline = now + waitMs;
    else if (now >= deadline) {
      throw new StoreUnavailableError(
        'SQLite',
        `${file} was locked by another writer for over ${waitMs} ms: nothing was written`,
        'is locked by another writer',
      );
    }
    // Jittered, so that many waiting writes do not all try at the same instant.
    await pause(Math.min(wait, deadline - now) * (0.5 + Math.random() / 2));
    wait = Math.min(wait * 2, LONGEST_PAUSE_MS);
  }
}
