// Who may use the admin API: the bearer token compared with each configured one in constant time
// (digests of equal length, every token compared, no early exit), and the slowing of an address that
// keeps failing: after FREE_FAILURES failed attempts in WINDOW_MS, each further refusal waits longer
// (doubling up to MAX_DELAY_MS) and says so in Retry-After. A success forgets the address's failures.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminToken } from '../config';

const FREE_FAILURES = 5;
const WINDOW_MS = 15 * 60_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 10_000;
const MAX_ADDRESSES = 10_000;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export class TokenCheck {
  private readonly digests: readonly { readonly name: string; readonly digest: Buffer }[];

  constructor(tokens: readonly AdminToken[]) {
    this.digests = tokens.map((t) => ({ name: t.name, digest: digest(t.token) }));
  }

  /** The token's name, or null: for an Authorization header `Bearer <token>`. */
  who(authorization: string | undefined): string | null {
    const m = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(authorization ?? '');
    const given = digest(m ? m[1] : '');
    let name: string | null = null;
    for (const d of this.digests) {
      if (timingSafeEqual(d.digest, given) && m) name = d.name;
    }
    return name;
  }
}

interface Failures {
  count: number;
  since: number;
}

export class FailureGate {
  private readonly byAddress = new Map<string, Failures>();

  /** Counts a failure from `address`; the wait (ms) before it is answered (0: none). */
  failed(address: string, now = Date.now()): number {
    let f = this.byAddress.get(address);
    if (!f || now - f.since > WINDOW_MS) {
      if (this.byAddress.size >= MAX_ADDRESSES) this.byAddress.clear();
      f = { count: 0, since: now };
      this.byAddress.set(address, f);
    }
    f.count++;
    if (f.count <= FREE_FAILURES) return 0;
    return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(20, f.count - FREE_FAILURES - 1));
  }

  succeeded(address: string): void {
    this.byAddress.delete(address);
  }
}
