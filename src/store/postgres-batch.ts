// The pieces both charge statements of postgres-accounts.ts share: a batch's lookups as SQL arrays
// and rows, and the server-side deadline check.

import type { RecordKey } from './store';

/**
 * Whether the server runs the statement after the deadline in parameter `param` (ms since the epoch
 * on the server's clock; null: none). Read after the row lock is taken (cur comes first), so a
 * statement that waited for another's lock past its deadline also grants nothing.
 */
export function pastDeadline(param: string): string {
  return `(${param}::float8 IS NOT NULL AND extract(epoch FROM clock_timestamp()) * 1000 >= ${param}::float8)`;
}

/** A charge waiting in a batch: chargeFound's record key, or null for a plain charge. */
interface BatchWaiter {
  readonly operation: string | null;
  readonly key: RecordKey | null;
}

/**
 * The batch's lookups ($3 usage operation, $4-$6 the record key, null for a plain charge: the
 * arrays of batchArrays) as `k`, each with whether it is to be charged (`hit`: plain, or its record
 * found, with the payload).
 */
const BATCH_K = `k AS (
         SELECT k.i, k.op, r.payload, (k.operation IS NULL OR r.payload IS NOT NULL) AS hit
           FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS k(op, operation, registration, state, i)
           LEFT JOIN records r ON r.operation = k.operation AND r.registration = k.registration AND r.state = k.state
       )`;

/** BATCH_K, and the lookups as `ranked`, each to be charged with its place among those (`rank`, from 1). */
export const BATCH_CTES = `${BATCH_K}, ranked AS (
         SELECT k.*, CASE WHEN hit THEN count(*) FILTER (WHERE hit) OVER (ORDER BY i) END AS rank FROM k
       )`;

/** BATCH_CTES's $3-$6 for a batch. */
export function batchArrays(batch: readonly BatchWaiter[]): (string | null)[][] {
  return [
    batch.map((b) => b.operation),
    batch.map((b) => b.key?.operation ?? null),
    batch.map((b) => b.key?.registration ?? null),
    batch.map((b) => b.key?.state ?? null),
  ];
}
