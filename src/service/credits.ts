// The credits a username has left, for GET /ajax/getcredits.aspx: the connection test of callers
// written for the public service. It reads the account through the store and costs no credit.

import type { UsernamePolicy } from '../accounts/accounts';
import { keyOf } from '../core/key';
import type { VehicleStore } from '../store/store';
import { paramValue, type RawParams } from './lookup';

/**
 * What an account without a limit reports (an unmetered account, and any username not registered
 * under USERNAME_POLICY=any): the largest 32-bit signed integer, so that callers who parse the
 * answer into an int (C#'s int.Parse, Java's Integer.parseInt) neither overflow nor read 0.
 * A larger balance is reported as this too.
 */
const UNMETERED_CREDITS = 2147483647;

const CREDITS_CALL = { name: 'getcredits', required: ['username'] } as const;

export class CreditsService {
  constructor(
    private readonly store: VehicleStore,
    private readonly policy: UsernamePolicy,
  ) {}

  /** The username the parameters name (validated as a lookup's is), and its credits left. */
  async creditsLeft(raw: RawParams): Promise<{ username: string; account?: string; credits: number }> {
    const username = paramValue(CREDITS_CALL, raw, 'username') as string;
    const found = await this.store.accounts.getAccount(keyOf(username));
    // The old username of a rotation past its grace period is unknown, as a lookup finds it.
    const account = found?.keyUntil != null && Date.now() >= found.keyUntil ? null : found;
    let credits: number;
    if (account === null) credits = this.policy === 'any' ? UNMETERED_CREDITS : 0;
    else if (account.credits === null) credits = UNMETERED_CREDITS;
    else credits = Math.max(0, Math.min(UNMETERED_CREDITS, account.credits));
    return { username, account: account?.name, credits };
  }
}
