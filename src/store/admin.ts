// The administration part of the storage boundary, beside the accounts (accounts.ts): a page of
// callers at a time, credit top-ups applied once per Idempotency-Key, the audit log of every change
// made by an operator, and the usage of every caller over a date range (billing). SQLite implements
// it in sqlite-admin.ts, PostgreSQL in postgres-admin.ts; both keep every contract written here.

import type { AccountSummary, CreditResult, UsageCount } from './accounts';

/** One page of callers, by name in code-point order. */
export interface AccountPageQuery {
  /** Only names or prefixes containing this text (case-insensitive); '' for all. */
  readonly search: string;
  /** Only names after this one (the last of the previous page); '' from the start. */
  readonly after: string;
  /** At most this many (1..1000). */
  readonly limit: number;
}

export interface AccountPage {
  readonly accounts: readonly AccountSummary[];
  /** Whether there are more after the last one. */
  readonly more: boolean;
}

/** A change recorded in the audit log. */
export interface AuditInput {
  /** ISO 8601 UTC time. */
  readonly at: string;
  /** Who: the name of the admin token, or `cli:<user>` for `reglookup users`. */
  readonly actor: string;
  /** What: add, update, credit, disable, enable, remove. */
  readonly action: string;
  /** The name of the account changed (never its username). */
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
}

export interface AuditEntry extends AuditInput {
  /** Increasing: newer entries have larger ids. */
  readonly id: number;
}

/**
 * An audit entry as both stores keep it: before and after as JSON text (id is a string from PostgreSQL's BIGSERIAL).
 */
export interface AuditRow {
  id: number | string;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
}

export function auditOf(r: AuditRow): AuditEntry {
  return {
    id: Number(r.id),
    at: r.at,
    actor: r.actor,
    action: r.action,
    target: r.target,
    before: r.before === null ? null : JSON.parse(r.before),
    after: r.after === null ? null : JSON.parse(r.after),
  };
}

/** A top-up with its Idempotency-Key. */
export interface CreditOnce {
  /** The account's key. */
  readonly username: string;
  /** Its name, for the audit entry (absent: the key). */
  readonly target?: string;
  readonly delta: number;
  readonly key: string;
  /** What the request asked (username and amount, hashed): the same key with another fingerprint is refused. */
  readonly fingerprint: string;
  /** Who and when, for the audit entry written in the same transaction. */
  readonly actor: string;
  readonly at: string;
}

/**
 * What a keyed top-up did: applied now, replayed (the key was seen with the same request: the result
 * then, nothing changed now), or refused because the key was used for another request. Only a top-up
 * that changed a balance stores its key: a refused one ('unknown', 'unlimited', 'bound') may be retried.
 */
export type CreditOnceResult = { readonly result: CreditResult; readonly replayed: boolean } | 'conflict';

export interface AdminStore {
  /** A page of callers, with the lookups charged on `day` (as listAccounts). */
  listPage(day: string, query: AccountPageQuery): Promise<AccountPage>;
  /**
   * Adds credits as addCredits does, in one transaction with the key's record and its audit entry,
   * so that the same key applies once however often it is sent, from any number of processes.
   */
  creditOnce(request: CreditOnce): Promise<CreditOnceResult>;
  addAudit(entry: AuditInput): Promise<void>;
  /** Audit entries with an id below `beforeId` (0: from the newest), newest first, at most `limit`. */
  audit(beforeId: number, limit: number): Promise<AuditEntry[]>;
  /**
   * Usage of every caller from `fromDay` to `toDay` (both inclusive), each row with its account's name
   * (the key of usage whose account is gone), by name, day, operation.
   */
  usageRange(fromDay: string, toDay: string): Promise<UsageCount[]>;
  /**
   * Deletes audit entries of days before `beforeDay` (as usage is pruned), and Idempotency-Keys
   * recorded before the day before it: a key is kept at least 24 hours whatever USAGE_DAYS is.
   */
  prune(beforeDay: string): Promise<number>;
  /** How many callers have a balance below `below` (unlimited ones are not counted). */
  countLowCredit(below: number): Promise<number>;
}

/** The first day of which keys are kept, when audit entries before `beforeDay` go. */
export function keysKeptFrom(beforeDay: string): string {
  return new Date(Date.parse(`${beforeDay}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
