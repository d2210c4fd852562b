// Usage records: lookups per username, UTC day and operation, found and not found. Counted in
// memory on the request path and written to the store in one transaction every FLUSH_MS (and at
// shutdown), so a lookup costs no store write for them. Each process (each worker of WORKERS=N)
// keeps and flushes its own counts; the store adds them up. Records older than the kept days are
// deleted at most once an hour, and audit entries with them.

import { messageOf } from '../core/errors';
import type { Logger } from '../ops/logger';
import type { AccountStore, UsageCount } from '../store/accounts';
import type { AdminStore } from '../store/admin';
import { StoreUnavailableError } from '../store/store';
import { dayOf } from './clock';

/**
 * How often the counts are written: also what a process killed with SIGKILL can lose of them at most
 * (the credits and today's count of a metered account are written with each lookup, not here).
 */
export const FLUSH_MS = 1000;
/** More distinct (username, day, operation) counts than this in memory: flush now rather than wait. */
const MAX_PENDING = 50_000;
const PRUNE_EVERY_MS = 3600_000;

interface Pending {
  username: string;
  day: string;
  operation: string;
  found: number;
  notFound: number;
}

export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** A flush asked for by the count's size is queued and has not yet taken the counts: ask for no other. */
  private sizeFlushQueued = false;
  private lastPrune = 0;
  /** Since when writing has failed for a reason other than the store's outage (0: it has not). */
  private failingSince = 0;

  constructor(
    /** With the admin side, whose audit log is pruned with the usage. */
    private readonly store: { readonly accounts: AccountStore; readonly admin?: AdminStore },
    private readonly keepDays: number,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  record(username: string, day: string, operation: string, found: boolean): void {
    const key = `${username}\u0000${day}\u0000${operation}`;
    let p = this.pending.get(key);
    if (!p) {
      p = { username, day, operation, found: 0, notFound: 0 };
      this.pending.set(key, p);
      if (this.pending.size >= MAX_PENDING && !this.sizeFlushQueued) {
        this.sizeFlushQueued = true;
        void this.flush();
      }
    }
    if (found) p.found++;
    else p.notFound++;
  }

  /** Writes what has been counted so far; flushes run one after another. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    this.sizeFlushQueued = false;
    const batch: UsageCount[] = [...this.pending.values()];
    this.pending = new Map();
    try {
      if (batch.length > 0) await this.store.accounts.addUsage(batch);
      if (this.failingSince > 0) {
        this.logger.info('usage records written again', { failedMs: Date.now() - this.failingSince });
        this.failingSince = 0;
      }
    } catch (e) {
      this.putBack(batch, e);
      return;
    }
    // Apart from the write: the counts are stored by now, and a prune that fails must not put them back.
    const now = Date.now();
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      const before = dayOf(now - (this.keepDays - 1) * 86_400_000);
      try {
        await this.store.accounts.pruneUsage(before);
        await this.store.admin?.prune(before);
      } catch (e) {
        if (!(e instanceof StoreUnavailableError))
          this.logger.warn('pruning old usage records failed; tried again in an hour', {
            error: messageOf(e),
          });
      }
    }
  }

  /** A batch that could not be written: its counts back into the pending ones, for the next flush. */
  private putBack(batch: readonly UsageCount[], e: unknown): void {
    // Put the counts back to be written with the next batch rather than lose them.
    for (const c of batch) {
      const key = `${c.username}\u0000${c.day}\u0000${c.operation}`;
      const p = this.pending.get(key);
      if (p) {
        p.found += c.found;
        p.notFound += c.notFound;
      } else this.pending.set(key, { ...c });
    }
    // A store that cannot serve is logged once by its watcher (ops/storewatch.ts); any other
    // failure once when it begins and once when the counts are written again, not at every flush.
    if (e instanceof StoreUnavailableError)
      this.logger.debug('usage records kept for the next flush: the store cannot serve', {
        pending: this.pending.size,
      });
    else if (this.failingSince === 0) {
      this.failingSince = Date.now();
      this.logger.error('writing usage records failed; kept in memory and retried every flush until written', {
        error: messageOf(e),
      });
    }
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
