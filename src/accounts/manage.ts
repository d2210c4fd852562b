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
import { accountKey, prefixOf } from '../core/key';
import { escapeInvisible, generateUsername, nameProblem, newUsernameProblem } from './username';

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

function checkUsername(username: string): void {
  // The username itself is not repeated: it is a credential.
  const problem = newUsernameProblem(username);
  if (problem) throw new ManageError('INVALID_INPUT', problem);
}

function checkName(name: string): void {
  const problem = nameProblem(name);
  if (problem) throw new ManageError('INVALID_INPUT', `${problem}: "${escapeInvisible(name.slice(0, 80))}"`);
}

/** The request a top-up's Idempotency-Key stands for: the account's name and the amount. */
function fingerprint(name: string, amount: number): string {
  return createHash('sha256').update(`${name}\u0000${amount}`).digest('base64url');
}

/** A new account: its name, and its username (given by the operator, or generated when absent). */
interface NewAccount {
  readonly name: string;
  readonly username?: string;
  readonly settings?: AccountChanges;
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

  /** The account of that name, or NOT_FOUND. */
  async byName(name: string): Promise<Account> {
    const a = await this.store.accounts.getAccountByName(name);
    if (!a) throw noSuch(name);
    return a;
  }

  /**
   * Adds an account; EXISTS when there is one of that name, or of that username. The username (the
   * one generated) is returned, to be shown once: the store keeps its key and prefix only.
   */
  async add(input: NewAccount): Promise<{ account: Account; username: string }> {
    checkName(input.name);
    const username = input.username ?? generateUsername();
    checkUsername(username);
    if (await this.store.accounts.getAccountByName(input.name))
      throw new ManageError('EXISTS', `an account named ${JSON.stringify(input.name)} exists`);
    const key = accountKey(username);
    const account: AccountInput = { ...input.settings, username: key, name: input.name, prefix: prefixOf(username) };
    if ((await this.store.accounts.getAccount(key)) || !(await this.store.accounts.addAccount(account)))
      throw new ManageError('EXISTS', `that username is another account's; choose another (or --generate one)`);
    const a = (await this.store.accounts.getAccount(key)) as Account;
    await this.audit('add', input.name, null, settingsOf(a));
    return { account: a, username };
  }

  async update(name: string, changes: AccountChanges): Promise<Account> {
    const before = await this.byName(name);
    const a = await this.store.accounts.updateAccount(before.username, changes, today());
    if (!a) throw noSuch(name);
    await this.audit('update', name, settingsOf(before), settingsOf(a));
    return a;
  }

  /**
   * A new username for the account (generated), returned to be shown once; the usernames it had stay
   * valid `graceS` seconds more at the most, then are refused as unknown. Credits, limits and usage
   * stay the account's.
   */
  async rotate(name: string, graceS: number): Promise<{ username: string; until: number; account: Account }> {
    const before = await this.byName(name);
    const username = generateUsername();
    const until = this.now().getTime() + graceS * 1000;
    if (!(await this.store.accounts.rotateKey(before.username, accountKey(username), prefixOf(username), until)))
      throw noSuch(name);
    const account = await this.byName(name);
    await this.audit(
      'rotate',
      name,
      { prefix: before.prefix },
      { prefix: account.prefix, oldUntil: new Date(until).toISOString() },
    );
    return { username, until, account };
  }

  /** Adds (or takes) credits: once per key when a key is given. */
  async credit(name: string, amount: number, key?: string): Promise<{ balance: number; replayed: boolean }> {
    let out: CreditOnceResult;
    const before = await this.byName(name);
    if (key === undefined) {
      const result = await this.store.accounts.addCredits(before.username, amount);
      if (typeof result === 'object')
        await this.audit('credit', name, { credits: before.credits }, { credits: result.balance, amount });
      out = { result, replayed: false };
    } else {
      out = await this.store.admin.creditOnce({
        username: before.username,
        target: name,
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
        'this Idempotency-Key was used for another request (another account or amount); use a new key for a new top-up',
      );
    return { balance: balanceOf(name, out.result), replayed: out.replayed };
  }

  async setEnabled(name: string, enabled: boolean): Promise<void> {
    const before = await this.byName(name);
    if (!(await this.store.accounts.setEnabled(before.username, enabled))) throw noSuch(name);
    await this.audit(enabled ? 'enable' : 'disable', name, { enabled: before.enabled }, { enabled });
  }

  async remove(name: string): Promise<void> {
    const before = await this.byName(name);
    if (!(await this.store.accounts.removeAccount(before.username))) throw noSuch(name);
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

/**
 * How many accounts have a username the upgrade to keys found guessable (`users list --suspicious`):
 * said after a migration, so that the operator rotates them.
 */
export async function guessableCount(store: Pick<VehicleStore, 'accounts'>): Promise<number> {
  return (await store.accounts.listAccounts(today())).filter((a) => a.weak !== null).length;
}

export function noSuch(name: string): ManageError {
  return new ManageError('NOT_FOUND', `no account named ${JSON.stringify(name.slice(0, 200))}`);
}

/** An account's settings as the audit log and the API show them. */
function settingsOf(a: Account): Record<string, unknown> {
  return { credits: a.credits, dailyLimit: a.dailyLimit, rate: a.rate, allow: [...a.allow], enabled: a.enabled };
}
