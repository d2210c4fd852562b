// Read replicas of the PostgreSQL store (DATABASE_READ_URL): record lookups go to a streaming
// replica known to be at most DATABASE_READ_MAX_LAG_MS behind the primary; accounts, charges, usage
// and imports stay on the primary (postgres.ts sends only record lookups here).
//
// How "at most that far behind" is known: every check reads the primary's current WAL position
// (P, at time t0), then asks each replica whether it has replayed up to P. One that has holds
// everything committed before t0, so it is "caught up at t0". A replica is used only while its last
// caught-up time is within the bound; a replica that is down, falling behind, or whose checks stop
// (the primary unreachable) drops out by itself once the bound passes, and lookups go to another
// replica or to the primary. A lookup that fails on a replica (gone, or cancelled by a recovery
// conflict) is asked again of the primary: a replica's trouble is never the caller's. A replica that
// does not answer within DATABASE_READ_TIMEOUT_MS (hung) counts as failed: its connection is closed
// and the lookup asked of the primary; its checks have the same bound, so one hung replica never
// stops the checks of the others.
//
// After this process changes records (an import), no replica is used until a check that began after
// the change finds it caught up: this process never reads its own import back in its old form.

import { messageOf } from '../core/errors';
import pg from 'pg';
import { withDeadline } from './postgres-deadline';

/** The shape of a readiness probe (ops/health.ts), which this layer may not import. */
export interface ReplicaProbe {
  readonly name: string;
  check(): Promise<unknown>;
  readonly degraded?: string;
}

interface Replica {
  /** "replica 1", "replica 2", ...: the order of DATABASE_READ_URL (never its host or password). */
  readonly name: string;
  readonly pool: pg.Pool;
  /** The start of the last check that found it holding everything the primary had then (0: none yet). */
  caughtUpAt: number;
  /** Why it is not used now, when it failed: for /readyz's detail and the log. */
  error: string | null;
}

export class Replicas {
  private readonly replicas: Replica[];
  private readonly timer: NodeJS.Timeout;
  private next = 0;
  /** Replicas must have been found caught up by a check begun at or after this (this process's last write). */
  private notBefore = 0;
  private checking: Promise<void> | null = null;

  constructor(
    configs: readonly pg.PoolConfig[],
    private readonly maxLagMs: number,
    /** The primary's current WAL position, as text (pg_lsn). */
    private readonly primaryLsn: () => Promise<string>,
    /** Longest a read or a check waits for a replica, ms (DATABASE_READ_TIMEOUT_MS). */
    private readonly readTimeoutMs = 300,
  ) {
    this.replicas = configs.map((config, i) => {
      const pool = new pg.Pool(config);
      const replica: Replica = { name: `replica ${i + 1}`, pool, caughtUpAt: 0, error: 'not checked yet' };
      // An idle connection the replica drops must not take the process with it.
      pool.on('error', (e) => this.failed(replica, e));
      return replica;
    });
    // Checked several times within the bound, so that a replica that keeps up is never dropped.
    this.timer = setInterval(() => void this.check(), Math.max(50, Math.min(1000, Math.floor(maxLagMs / 4))));
    this.timer.unref();
    void this.check();
  }

  /** A replica to read from now (round robin over those within the bound), or null: read from the primary. */
  pick(): { readonly pool: pg.Pool; readonly replica: object; readonly name: string } | null {
    const now = Date.now();
    for (let k = 0; k < this.replicas.length; k++) {
      const r = this.replicas[(this.next + k) % this.replicas.length];
      if (this.usable(r, now)) {
        this.next = (this.next + k + 1) % this.replicas.length;
        return { pool: r.pool, replica: r, name: r.name };
      }
    }
    return null;
  }

  private usable(r: Replica, now: number): boolean {
    return r.error === null && r.caughtUpAt >= this.notBefore && now - r.caughtUpAt <= this.maxLagMs;
  }

  /** A read on this replica failed: not used again until a check finds it caught up. */
  failed(replica: object, e: unknown): void {
    const r = replica as Replica;
    r.error = messageOf(e).slice(0, 200);
    r.caughtUpAt = 0;
  }

  /** This process changed records: replicas wait for a check that sees the change. */
  changed(): void {
    this.notBefore = Date.now();
  }

  /** One round of checks (one at a time). */
  check(): Promise<void> {
    if (this.checking === null) {
      this.checking = this.checkAll().finally(() => {
        this.checking = null;
      });
    }
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    const t0 = Date.now();
    let lsn: string;
    try {
      lsn = await this.primaryLsn();
    } catch {
      // Without the primary's position no lag can be known: the replicas age out of the bound.
      return;
    }
    await Promise.all(
      this.replicas.map(async (r) => {
        try {
          const q = await withDeadline(r.pool, Date.now() + this.readTimeoutMs, r.name, (c) =>
            c.query<{ caught_up: boolean | null }>(
              'SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) >= $1::pg_lsn AS caught_up',
              [lsn],
            ),
          );
          r.error = null;
          if (q.rows[0]?.caught_up === true) r.caughtUpAt = Math.max(r.caughtUpAt, t0);
        } catch (e) {
          this.failed(r, e);
        }
      }),
    );
  }

  /** Each replica by its position in DATABASE_READ_URL ("1", "2", ...) and whether lookups read it now. */
  inUse(): { replica: string; inUse: boolean }[] {
    const now = Date.now();
    return this.replicas.map((r, i) => ({ replica: String(i + 1), inUse: this.usable(r, now) }));
  }

  /** Each replica's state in words: in use, or why not. */
  states(): string[] {
    const now = Date.now();
    return this.replicas.map((r) => {
      if (this.usable(r, now)) return `${r.name}: in use`;
      if (r.error !== null) return `${r.name}: skipped (${r.error === 'not checked yet' ? r.error : 'failing'})`;
      if (r.caughtUpAt === 0 || r.caughtUpAt < this.notBefore) return `${r.name}: skipped (not yet caught up)`;
      return `${r.name}: skipped (behind by more than ${this.maxLagMs} ms)`;
    });
  }

  /**
   * /readyz's 'replicas' check: a skipped replica degrades the service (lookups go elsewhere), never makes it unready.
   */
  probe(): ReplicaProbe {
    let last = '';
    const check = async () => {
      const skipped = this.states().filter((s) => !s.endsWith(': in use'));
      last = skipped.join('; ');
      if (skipped.length > 0) {
        const detail = this.replicas
          .filter((r) => r.error !== null && r.error !== 'not checked yet')
          .map((r) => `${r.name}: ${r.error}`);
        throw new Error(`${last}${detail.length ? ` (${detail.join('; ')})` : ''}`);
      }
    };
    const anyUsable = () => this.replicas.some((r) => this.usable(r, Date.now()));
    return {
      name: 'replicas',
      check,
      // Read by /readyz after a failed check: what is skipped, and where lookups go meanwhile.
      get degraded() {
        return `${last}; record lookups go to ${anyUsable() ? 'the other replicas' : 'the primary'} until it is back`;
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => undefined)));
  }
}
