// Managing callers, as `reglookup users` and the admin API both do it: every change checked the same
// way, made through the store, and written to the audit log (who, when, what, before and after).
// The CLI and the admin API differ only in how they read their input and write their answer.

import { createHash } from 'node:crypto';
import { addressEntryProblem } from '../net/cidr';
import {
  CREDITS_BOUND,
  type Account,
  type AccountChanges,
  type AccountInput,
  type CreditResult,
} from '../store/accounts';
import type { CreditOnceResult } from '../store/admin';
import type { VehicleStore } from '../store/store';
import { dayOf, today } from './clock';
import { escapeInvisible, newUsernameProblem } from './username';

/** What an operator may set, and within which bounds (shared by the CLI's options and the API's JSON). */
export const SETTING_BOUNDS = {
  credits: { min: 0, max: CREDITS_BOUND },
  dailyLimit: { min: 1, max: 1_000_000_000 },
  /** Lookups per second; 0 is "no rate limit". */
  rate: { min: 0.001, max: 1_000_000 },
  allowEntries: 100,
  /** Credits one top-up may add or take, either way. */
  amount: CREDITS_BOUND,
} as const;

export type ManagedStore = Pick<VehicleStore, 'accounts' | 'admin'>;

/** A change refused for its input: the message says which field and why. */
export class ManageError extends Error {
  constructor(
    readonly code: 'INVALID_INPUT' | 'NOT_FOUND' | 'EXISTS' | 'CONFLICT',
    message: string,
  ) {
    super(message);
  }
}

/** What is wrong with an allow-list, or null. */
export function allowProblem(list: readonly string[]): string | null {
  if (list.length > SETTING_BOUNDS.allowEntries) return `takes at most ${SETTING_BOUNDS.allowEntries} entries`;
  for (const item of list) {
    const problem = addressEntryProblem(item);
    if (problem) return problem;
  }
  return null;
}

/** What is wrong with a rate (lookups per second, 0: none), or null. */
export function rateProblem(n: number): string | null {
  const { min, max } = SETTING_BOUNDS.rate;
  return n !== 0 && (n < min || n > max) ? `must be 0 (none) or between ${min} and ${max}, got ${n}` : null;
}

function checkUsername(name: string): void {
  const problem = newUsernameProblem(name);
  if (problem) throw new ManageError('INVALID_INPUT', `${problem}: "${escapeInvisible(name.slice(0, 80))}"`);
}

/** The request a top-up's Idempotency-Key stands for. */
function fingerprint(username: string, amount: number): string {
  return createHash('sha256').update(`${username}\u0000${amount}`).digest('base64url');
}

/** The days from `days - 1` days ago to today (UTC), as usage is asked for. */
export function fromDayFor(days: number, now = Date.now()): string {
  return dayOf(now - (days - 1) * 86_400_000);
}

export class AccountAdmin {
  constructor(
    private readonly store: ManagedStore,
    /** Who makes the changes, as the audit log names them. */
    private readonly actor: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private async audit(action: string, target: string, before: unknown, after: unknown): Promise<void> {
    await this.store.admin.addAudit({ at: this.now().toISOString(), actor: this.actor, action, target, before, after });
  }

  /** Adds a caller; EXISTS when there is one of that name. */
  async add(input: AccountInput): Promise<Account> {
    checkUsername(input.username);
    if (!(await this.store.accounts.addAccount(input)))
      throw new ManageError('EXISTS', `username ${JSON.stringify(input.username)} exists`);
    const a = (await this.store.accounts.getAccount(input.username)) as Account;
    await this.audit('add', input.username, null, settingsOf(a));
    return a;
  }

  async update(name: string, changes: AccountChanges): Promise<Account> {
    const before = await this.store.accounts.getAccount(name);
    const a = before && (await this.store.accounts.updateAccount(name, changes, today()));
    if (!before || !a) throw noSuch(name);
    await this.audit('update', name, settingsOf(before), settingsOf(a));
    return a;
  }

  /** Adds (or takes) credits: once per key when a key is given. */
  async credit(name: string, amount: number, key?: string): Promise<{ balance: number; replayed: boolean }> {
    let out: CreditOnceResult;
    if (key === undefined) {
      const before = await this.store.accounts.getAccount(name);
      const result = await this.store.accounts.addCredits(name, amount);
      if (typeof result === 'object')
        await this.audit('credit', name, { credits: before?.credits ?? null }, { credits: result.balance, amount });
      out = { result, replayed: false };
    } else {
      out = await this.store.admin.creditOnce({
        username: name,
        delta: amount,
        key,
        fingerprint: fingerprint(name, amount),
        actor: this.actor,
        at: this.now().toISOString(),
      });
    }
    if (out === 'conflict')
      throw new ManageError(
        'CONFLICT',
        'this Idempotency-Key was used for another request (another username or amount); use a new key for a new top-up',
      );
    return { balance: balanceOf(name, out.result), replayed: out.replayed };
  }

  async setEnabled(name: string, enabled: boolean): Promise<void> {
    const before = await this.store.accounts.getAccount(name);
    if (!before || !(await this.store.accounts.setEnabled(name, enabled))) throw noSuch(name);
    await this.audit(enabled ? 'enable' : 'disable', name, { enabled: before.enabled }, { enabled });
  }

  async remove(name: string): Promise<void> {
    const before = await this.store.accounts.getAccount(name);
    if (!before || !(await this.store.accounts.removeAccount(name))) throw noSuch(name);
    await this.audit('remove', name, settingsOf(before), null);
  }
}

function balanceOf(name: string, result: CreditResult): number {
  if (result === 'unknown') throw noSuch(name);
  if (result === 'unlimited')
    throw new ManageError(
      'INVALID_INPUT',
      `${JSON.stringify(name)} has unlimited credits; give it a balance first (set its credits to a number)`,
    );
  if (result === 'bound')
    throw new ManageError(
      'INVALID_INPUT',
      `the balance would pass the most an account may hold (${CREDITS_BOUND}); nothing was added`,
    );
  return result.balance;
}

export function noSuch(name: string): ManageError {
  return new ManageError('NOT_FOUND', `no such username: ${JSON.stringify(name.slice(0, 200))}`);
}

/** An account's settings as the audit log and the API show them. */
function settingsOf(a: Account): Record<string, unknown> {
  return { credits: a.credits, dailyLimit: a.dailyLimit, rate: a.rate, allow: [...a.allow], enabled: a.enabled };
}
