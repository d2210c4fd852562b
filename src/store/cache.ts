// The upstream cache's storage contract: answers fetched from an upstream provider (service/upstream.ts),
// each with the provider that gave it and when, kept beside the imported records but apart from them
// (a table of their own): imported records always win, an export or backup leaves fetched answers out
// unless asked, and `reglookup cache purge` never touches an imported record.

import type { RecordKey } from './store';

export interface CachedAnswer {
  /**
   * The record's JSON text as a provider answered it (checked before it was kept); null: the upstream said not found.
   */
  readonly payload: string | null;
  /** The provider that answered (dvla, regcheck, ...). */
  readonly provider: string;
  /** When it was fetched, ms since the epoch. */
  readonly fetchedAt: number;
}

export interface CacheEntry extends RecordKey, CachedAnswer {}

/** Which entries a purge or stats call is about; every entry when both are absent. */
export interface CacheFilter {
  readonly operation?: string;
  readonly registration?: string;
}

export interface CacheStatsRow {
  readonly operation: string;
  readonly provider: string;
  /** Entries holding an answer. */
  readonly found: number;
  /** Entries holding a not-found. */
  readonly notFound: number;
  /** Fetch time of the oldest and newest entry, ms since the epoch. */
  readonly oldest: number;
  readonly newest: number;
}

export interface UpstreamCacheStore {
  /** The cached answer for that key, fresh or not (the caller judges its age), or null. */
  cacheGet(key: RecordKey): Promise<CachedAnswer | null>;
  /** Keeps an answer, replacing any for the same key. */
  cachePut(entry: CacheEntry): Promise<void>;
  /** Entries by operation and provider. */
  cacheStats(filter?: CacheFilter): Promise<CacheStatsRow[]>;
  /** Removes the entries the filter names; returns how many. */
  cachePurge(filter?: CacheFilter): Promise<number>;
  /** Every entry in key order (for export --with-cache). */
  cacheEntries(): AsyncIterable<CacheEntry>;
}

/** A filter's WHERE clause with numbered ($1) or plain (?) placeholders, and its values. */
export function cacheWhere(filter: CacheFilter, numbered: boolean): { where: string; values: string[] } {
  const parts: string[] = [];
  const values: string[] = [];
  const mark = () => (numbered ? `$${values.length}` : '?');
  if (filter.operation !== undefined) {
    values.push(filter.operation);
    parts.push(`operation = ${mark()}`);
  }
  if (filter.registration !== undefined) {
    values.push(filter.registration);
    parts.push(`registration = ${mark()}`);
  }
  return { where: parts.length ? ` WHERE ${parts.join(' AND ')}` : '', values };
}
