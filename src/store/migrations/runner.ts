// Versioned schema changes, applied in order and each at most once. A store records what it has
// applied in a `schema_version` table; the runner is the same for every store, which supplies only
// how to take its lock, read that table and apply one step (see postgres.ts in this folder).
// Several instances starting at once take turns under the store's lock: the first applies what is
// missing, the others then find nothing left to do.

export interface Migration {
  /** 1, 2, 3, ...: applied in this order; never renumber or edit one that has been released. */
  readonly version: number;
  /** A few words for logs and `reglookup migrate`. */
  readonly name: string;
  /** The statements, run in one transaction together with the schema_version row. */
  readonly sql: string;
}

/** What a store provides for the runner. */
export interface MigrationTarget {
  /** Holds the store's migration lock (across processes) while fn runs. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Versions recorded in schema_version (creating the table when there is none). */
  appliedVersions(): Promise<number[]>;
  /** Runs the migration and records its version, all or nothing. */
  apply(migration: Migration): Promise<void>;
}

export interface MigrationReport {
  /** Versions applied by this call, in order. */
  readonly applied: readonly Migration[];
  /** The version the store is at afterwards. */
  readonly version: number;
  /** SQLite: the accounts file's own steps (migrations/sqlite-accounts.ts), reported the same way. */
  readonly accounts?: MigrationReport;
}

export class MigrationError extends Error {}

/** Checks a list of migrations: versions 1..n, in order, none twice. */
function checkMigrations(list: readonly Migration[]): void {
  list.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new MigrationError(`migration '${m.name}' has version ${m.version}, expected ${i + 1}`);
  });
}

/**
 * The migrations of `list` a store that has applied `applied` still lacks, up to `upTo`, in order.
 * A store at a version this release does not know (written by a newer release) is refused rather
 * than served with a schema it cannot read.
 */
function pendingMigrations<M extends Migration>(applied: readonly number[], list: readonly M[], upTo = Infinity): M[] {
  checkMigrations(list);
  const have = new Set(applied);
  const newest = Math.max(0, ...have);
  if (newest > list.length) {
    throw new MigrationError(
      `the database is at schema version ${newest}, newer than this release knows (${list.length}); upgrade reglookup`,
    );
  }
  return list.filter((m) => m.version <= upTo && !have.has(m.version));
}

/**
 * Applies every migration of `list` the store has not applied, under its lock. `upTo` stops at a
 * version (for tests of an upgrade from an older schema).
 */
export async function migrate(
  target: MigrationTarget,
  list: readonly Migration[],
  upTo = Infinity,
): Promise<MigrationReport> {
  return target.withLock(async () => {
    const applied = await target.appliedVersions();
    const done: Migration[] = [];
    for (const m of pendingMigrations(applied, list, upTo)) {
      await target.apply(m);
      done.push(m);
    }
    return { applied: done, version: Math.max(0, ...applied, ...done.map((m) => m.version)) };
  });
}

/**
 * The same for a store whose driver is synchronous (better-sqlite3): its schema is brought up to
 * date while the store object is constructed, before any statement is prepared against it.
 */
export interface SyncMigrationTarget<M extends Migration = Migration> {
  withLock<T>(fn: () => T): T;
  appliedVersions(): number[];
  apply(migration: M): void;
}

export function migrateSync<M extends Migration>(
  target: SyncMigrationTarget<M>,
  list: readonly M[],
  upTo = Infinity,
): MigrationReport {
  return target.withLock(() => {
    const applied = target.appliedVersions();
    const done: M[] = [];
    for (const m of pendingMigrations(applied, list, upTo)) {
      target.apply(m);
      done.push(m);
    }
    return { applied: done, version: Math.max(0, ...applied, ...done.map((m) => m.version)) };
  });
}
