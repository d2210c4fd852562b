// One import into the PostgreSQL store (PostgresStore.beginImport): one transaction on a connection
// of its own, under the store's write lock. Into a table that holds no records when it begins (a
// first load, a move from SQLite), records stream through COPY straight into `records` for as long
// as every put is a key's first in the batch (put's `fresh`) and nothing is deleted: one write a
// record. Otherwise, and from the first repeat or delete on, puts and deletes stream through COPY
// into a staging table (memory stays flat), each row with its sequence number and a delete flag;
// commit reduces them to the last word on each key and applies, in that same transaction, first
// the replacement (the replaced operations' records that the batch does not put go), then the
// deletions, then the puts (unchanged records are left alone). Readers, on any connection, see the
// records as they were until COMMIT, and never wait for it (MVCC).

import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  AS_OF_PREFIX,
  ImportTimes,
  type ImportBatch,
  type ImportOptions,
  type RecordKey,
  type StoredRecord,
} from './store';

/** Text gathered before it is written to the COPY stream. */
const COPY_CHUNK = 64 * 1024;
const KEY_MATCH = 'f.operation = r.operation AND f.registration = r.registration AND f.state = r.state';

/** One field of COPY's text format. */
function copyField(v: string): string {
  return v.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

export class PostgresImport implements ImportBatch {
  private open = true;
  private copyError: Error | null = null;
  private copy: ReturnType<typeof copyFrom> | null = null;
  private chunk = '';
  /** 'direct': rows go into records; 'staged': into import_staging, merged at commit. */
  private mode: 'direct' | 'staged' = 'staged';
  private beganEmpty = false;
  private readonly replaceAll: boolean;
  private readonly replaced: Set<string>;
  private readonly times: ImportTimes;

  /** `ended` is called once the transaction has ended, with whether it committed. */
  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: ImportOptions,
    private readonly ended: (committed: boolean) => void,
  ) {
    this.replaceAll = options.replace === 'all';
    this.replaced = new Set<string>(options.replace === 'all' || options.replace === undefined ? [] : options.replace);
    this.times = new ImportTimes(options.replace, options.asOf ?? Date.now());
  }

  /** BEGIN, the write lock (`lockSql` with `lockName`), and the COPY the batch starts with. */
  async begin(lockSql: string, lockName: string): Promise<void> {
    const client = this.client;
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query(lockSql, [lockName]);
      // Under the write lock: no other import can add records before this one commits.
      this.beganEmpty = (await client.query('SELECT 1 FROM records LIMIT 1')).rowCount === 0;
      this.mode = this.beganEmpty ? 'direct' : 'staged';
      if (this.mode === 'direct') this.startCopy('COPY records (operation, registration, state, payload) FROM STDIN');
      else await this.beginStaging();
    } catch (e) {
      await this.end('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  async put(r: StoredRecord, fresh?: boolean): Promise<void> {
    this.live();
    // Whether the store held a record of the operation before is asked at commit (records are untouched until then).
    if (!this.times.seen(r.operation)) this.times.saw(r.operation, !this.beganEmpty);
    const key = `${copyField(r.operation)}\t${copyField(r.registration)}\t${copyField(r.state)}\t${copyField(r.payload)}`;
    if (this.mode === 'direct' && fresh !== true) await this.toStaging();
    await this.add(this.mode === 'direct' ? `${key}\n` : `${key}\tf\n`);
  }

  async delete(k: RecordKey): Promise<void> {
    this.live();
    if (this.mode === 'direct') await this.toStaging();
    await this.add(`${copyField(k.operation)}\t${copyField(k.registration)}\t${copyField(k.state)}\t\\N\tt\n`);
  }

  async replaceOperation(operation: string): Promise<void> {
    this.live();
    this.replaced.add(operation);
    this.times.addReplaced(operation);
  }

  async commit(): Promise<void> {
    if (!this.open) return;
    try {
      await this.flush();
      await this.stopCopy();
      if (this.copyError) throw this.copyError;
      const held = await this.heldBefore();
      if (this.mode === 'staged') await this.merge();
      await this.writeImportTimes(held);
      if (this.options.sample)
        await this.client.query("INSERT INTO meta (key, value) VALUES ('sample', '1') ON CONFLICT (key) DO NOTHING");
      else await this.client.query("DELETE FROM meta WHERE key = 'sample'");
    } catch (e) {
      await this.end('ROLLBACK').catch(() => undefined);
      throw e;
    }
    await this.end('COMMIT');
  }

  async rollback(): Promise<void> {
    if (!this.open) return;
    await this.stopCopy();
    await this.end('ROLLBACK');
  }

  /** The staged rows applied to records: the last word on each key, the replacement, the deletions, the puts. */
  private async merge(): Promise<void> {
    const client = this.client;
    // The last word on each key: a later put or delete of the same key wins.
    await client.query(
      `CREATE TEMPORARY TABLE import_final ON COMMIT DROP AS
         SELECT DISTINCT ON (operation, registration, state) operation, registration, state, payload, del
           FROM import_staging ORDER BY operation, registration, state, seq DESC`,
    );
    await client.query('ANALYZE import_final');
    // A table empty when the batch began holds only what this batch copied: nothing to replace.
    if (!this.beganEmpty && (this.replaceAll || this.replaced.size > 0)) {
      await client.query(
        `DELETE FROM records r WHERE ${this.replaceAll ? 'true' : 'r.operation = ANY($1::text[])'}
           AND NOT EXISTS (SELECT 1 FROM import_final f WHERE NOT f.del AND ${KEY_MATCH})`,
        this.replaceAll ? [] : [[...this.replaced]],
      );
    }
    await client.query(`DELETE FROM records r USING import_final f WHERE f.del AND ${KEY_MATCH}`);
    // Unchanged records are left alone: a re-import of the same file writes (almost) nothing.
    await client.query(
      `INSERT INTO records (operation, registration, state, payload)
       SELECT operation, registration, state, payload FROM import_final WHERE NOT del
       ON CONFLICT (operation, registration, state) DO UPDATE SET payload = EXCLUDED.payload
       WHERE records.payload IS DISTINCT FROM EXCLUDED.payload`,
    );
  }

  /** Which of the operations the batch adds to (no replace) the store held records of before it. */
  private async heldBefore(): Promise<Set<string>> {
    const held = new Set<string>();
    // Staged rows reach records only at merge: what records holds now is what it held before the batch.
    for (const op of this.times.merged()) {
      const r = await this.client.query('SELECT 1 FROM records WHERE operation = $1 LIMIT 1', [op]);
      if (r.rowCount !== 0) held.add(op);
    }
    return held;
  }

  /** The batch's import times (ImportTimes), in its transaction. */
  private async writeImportTimes(held: Set<string>): Promise<void> {
    const client = this.client;
    const w = this.times.writes((op) => held.has(op));
    const at = String(this.times.at);
    if (w.clearAll) await client.query('DELETE FROM meta WHERE starts_with(key, $1)', [AS_OF_PREFIX]);
    if (w.clear.length > 0)
      await client.query('DELETE FROM meta WHERE key = ANY($1::text[])', [w.clear.map((op) => AS_OF_PREFIX + op)]);
    for (const op of w.set)
      await client.query(
        'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [AS_OF_PREFIX + op, at],
      );
    for (const op of w.lower)
      await client.query('UPDATE meta SET value = $1 WHERE key = $2 AND value::bigint > $1::bigint', [
        at,
        AS_OF_PREFIX + op,
      ]);
  }

  private live(): void {
    if (!this.open) throw new Error('this import has ended');
  }

  private async end(sql: string): Promise<void> {
    this.open = false;
    try {
      await this.client.query(sql);
    } finally {
      this.client.release();
      this.ended(sql === 'COMMIT');
    }
  }

  private startCopy(sql: string): void {
    const stream = this.client.query(copyFrom(sql));
    stream.on('error', (e: Error) => {
      this.copyError ??= e;
    });
    this.copy = stream;
  }

  /** The batch's staging table, and a COPY into it. */
  private async beginStaging(): Promise<void> {
    await this.client.query(
      'CREATE TEMPORARY TABLE import_staging (seq BIGSERIAL, operation TEXT NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL, payload TEXT, del BOOLEAN NOT NULL) ON COMMIT DROP',
    );
    this.startCopy('COPY import_staging (operation, registration, state, payload, del) FROM STDIN');
  }

  private async flush(): Promise<void> {
    const copy = this.copy;
    if (this.chunk === '' || copy === null) return;
    const text = this.chunk;
    this.chunk = '';
    // A stream that has failed emits neither 'drain' nor 'error' again: its error is in copyError.
    if (!copy.write(text) && !copy.destroyed) await once(copy, 'drain').catch(() => undefined);
  }

  private async stopCopy(): Promise<void> {
    const stream = this.copy;
    if (stream === null) return;
    this.copy = null;
    stream.end();
    // The stream's own listener has normally recorded the failure already; a stream that ended
    // early without an error event is caught here.
    await finished(stream).catch((e: Error) => {
      this.copyError ??= e;
    });
  }

  private async add(line: string): Promise<void> {
    if (this.copyError) throw this.copyError;
    this.chunk += line;
    if (this.chunk.length >= COPY_CHUNK) await this.flush();
  }

  /** From the first repeat or delete on, rows go to the staging table (what was copied stays). */
  private async toStaging(): Promise<void> {
    await this.flush();
    await this.stopCopy();
    if (this.copyError) throw this.copyError;
    this.mode = 'staged';
    await this.beginStaging();
  }
}
