// What the store's outages look like from outside: one log line when the store stops serving (its
// disk is full, it is locked past the wait, it cannot be reached), one when it serves again (with
// how long it was out), a counter of the calls refused meanwhile, and a gauge per side. Reads and
// writes are watched apart: on a full disk reads still succeed, and must not announce a recovery
// that the next write contradicts. The request path pays one property test per store call while
// the store serves.

import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { StoreUnavailableError } from '../store/unavailable';

export type StoreSide = 'read' | 'write';

interface Outage {
  readonly since: number;
  readonly kind: string;
  refused: number;
}

export class StoreWatch {
  /** Outstanding outages by side; null while that side serves. */
  read: Outage | null = null;
  write: Outage | null = null;

  constructor(private readonly logger: Logger, private readonly metrics: Metrics | null) {}

  /** A store call on `side` failed for want of the store. */
  failed(side: StoreSide, e: StoreUnavailableError): void {
    this.metrics?.storeUnavailable(e.kind);
    const outage = this[side];
    if (outage) {
      outage.refused++;
      return;
    }
    this[side] = { since: Date.now(), kind: e.kind, refused: 1 };
    this.metrics?.storeUp(side, false);
    this.logger.error('store unavailable', { side, kind: e.kind, reason: e.reason });
  }

  /** A store call on `side` succeeded: the end of that side's outage, if there was one. */
  succeeded(side: StoreSide): void {
    const outage = this[side];
    if (!outage) return;
    this[side] = null;
    this.metrics?.storeUp(side, true);
    this.logger.info('store available again', { side, kind: outage.kind, downMs: Date.now() - outage.since, refused: outage.refused });
  }
}
