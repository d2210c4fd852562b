// Who may use the admin API: the bearer token compared with each configured one in constant time
// (digests of equal length, every token compared, no early exit), and the slowing of failures.
//
// A failure is counted when it arrives and its refusal is answered at a slot of its own: after
// FREE_FAILURES failures from an address in WINDOW_MS, each further refusal waits longer (doubling up
// to MAX_DELAY_MS) after the address's previous refusal, so guesses sent in parallel are answered no
// faster than guesses sent one after another. Across all addresses, failures beyond a burst of
// GLOBAL_BURST are also spaced GLOBAL_SPACING_MS apart, so that many addresses, or addresses that
// keep changing, guess no faster than that either. A good token is never held: it is checked on
// arrival and served at once, so what bounds how fast guesses are checked is how many refusals may be
// held (per address and in all), each until its turn even when its client has gone; beyond that, a
// request is refused at once with 429 before its token is looked at.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { AdminToken } from '../config';

const FREE_FAILURES = 5;
const WINDOW_MS = 15 * 60_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 10_000;
/** Addresses remembered; beyond, those not (yet) slowed are forgotten first, oldest first. */
const MAX_ADDRESSES = 10_000;
/** Failures from all addresses answered without the global spacing, refilled one per GLOBAL_SPACING_MS. */
const GLOBAL_BURST = 100;
const GLOBAL_SPACING_MS = 100;
/** Refusals held at once, from one address and in all. */
const MAX_HELD_PER_ADDRESS = 200;
const MAX_HELD = 2_000;

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
  /** When the address's latest refusal goes out: the next one is spaced from it. */
  next: number;
  held: number;
}

/** A failure's refusal: answer it after `waitMs`, then call `release`. */
export interface Hold {
  readonly waitMs: number;
  release(): void;
}

export class FailureGate {
  private readonly globalBurst: number;
  /** Addresses with at most FREE_FAILURES failures, oldest first: forgotten first when the table is full. */
  private readonly fresh = new Map<string, Failures>();
  /** Addresses being slowed, oldest first. */
  private readonly slowed = new Map<string, Failures>();
  private globalTokens: number;
  private globalAt = 0;
  /** When the latest globally spaced refusal goes out. */
  private globalNext = 0;
  private held = 0;

  /** `globalBurst`: GLOBAL_BURST unless given (a test of the table alone sets it out of the way). */
  constructor(opts: { globalBurst?: number } = {}) {
    this.globalBurst = opts.globalBurst ?? GLOBAL_BURST;
    this.globalTokens = this.globalBurst;
  }

  /**
   * Whether a request from `address` may have its token checked now; otherwise the ms after which to
   * retry (too many of its refusals, or of all refusals, are being held).
   */
  busy(address: string, now = Date.now()): number {
    const f = this.slowed.get(address) ?? this.fresh.get(address);
    if (f && f.held >= MAX_HELD_PER_ADDRESS) return Math.max(1000, f.next - now);
    if (this.held >= MAX_HELD) return Math.max(1000, this.globalNext - now);
    return 0;
  }

  /** Counts a failure from `address` as it arrives; when to answer it. */
  failed(address: string, now = Date.now()): Hold {
    const f = this.entry(address, now);
    f.count++;
    let at = now;
    if (f.count > FREE_FAILURES) {
      if (f.count === FREE_FAILURES + 1) {
        this.fresh.delete(address);
        this.slowed.set(address, f);
      }
      at =
        Math.max(now, f.next) + Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(20, f.count - FREE_FAILURES - 1));
    }
    if (!this.takeGlobal(now)) {
      this.globalNext = Math.max(now, this.globalNext) + GLOBAL_SPACING_MS;
      at = Math.max(at, this.globalNext);
    }
    f.next = Math.max(f.next, at);
    const waitMs = at - now;
    if (waitMs === 0) return { waitMs, release: () => undefined };
    f.held++;
    this.held++;
    let released = false;
    return {
      waitMs,
      release: () => {
        if (released) return;
        released = true;
        f.held--;
        this.held--;
      },
    };
  }

  /** A good token from `address`: its own failures are forgotten (the global count is not). */
  succeeded(address: string): void {
    this.fresh.delete(address);
    this.slowed.delete(address);
  }

  private takeGlobal(now: number): boolean {
    if (now > this.globalAt) {
      this.globalTokens = Math.min(this.globalBurst, this.globalTokens + (now - this.globalAt) / GLOBAL_SPACING_MS);
      this.globalAt = now;
    }
    if (this.globalTokens < 1) return false;
    this.globalTokens--;
    return true;
  }

  private entry(address: string, now: number): Failures {
    let f = this.slowed.get(address) ?? this.fresh.get(address);
    if (f && now - f.since > WINDOW_MS && f.held === 0) {
      this.slowed.delete(address);
      this.fresh.delete(address);
      f = undefined;
    }
    if (f) return f;
    if (this.fresh.size + this.slowed.size >= MAX_ADDRESSES) {
      const from = this.fresh.size > 0 ? this.fresh : this.slowed;
      const oldest = from.keys().next();
      if (!oldest.done) from.delete(oldest.value);
    }
    f = { count: 0, since: now, next: now, held: 0 };
    this.fresh.set(address, f);
    return f;
  }
}
