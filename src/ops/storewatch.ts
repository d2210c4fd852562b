// What the service does when its store stops serving and comes back (PostgreSQL cannot be reached;
// SQLite's disk is full), or stops taking the upstream cache's writes: one log line each way (no
// stack, no line per request: callers are answered SERVICE_UNAVAILABLE meanwhile, or served their
// fetched answer uncached), the reglookup_store_up gauge (0 while either lasts) and
// reglookup_store_unavailable_total counter, and what /readyz's store check says is degraded.

import type { StoreWatcher } from '../store/store';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

/** The upstream chain's side: fetched answers that could not be cached, and the first that could again. */
export interface CacheWriteWatch {
  cacheWriteFailed(error: unknown): void;
  cacheWritten(): void;
}

export interface StoreHealth extends StoreWatcher, CacheWriteWatch {
  /** What works in a lesser way while the store fails some writes, for /readyz; null when nothing does. */
  degraded(): string | null;
}

export function storeWatcher(logger: Logger, metrics: Metrics | null): StoreHealth {
  let storeDown = false;
  let cacheDownSince = 0;
  const gauge = () => metrics?.storeUp(!storeDown && cacheDownSince === 0);
  return {
    down(store, error, problem = 'cannot be reached') {
      logger.error(
        `store unavailable: ${store} ${problem}; lookups that need it are answered SERVICE_UNAVAILABLE (503, Retry-After) until it serves again`,
        { store, error },
      );
      storeDown = true;
      gauge();
    },
    up(store, downMs, state = 'is reachable again') {
      logger.info(`store back: ${store} ${state} after ${(downMs / 1000).toFixed(1)} s`, { store, downMs });
      storeDown = false;
      gauge();
    },
    refused(_store, calls) {
      metrics?.storeUnavailable(calls);
    },
    cacheWriteFailed(error) {
      if (cacheDownSince !== 0) return;
      cacheDownSince = Date.now();
      logger.error(
        'store cannot cache upstream answers: fetched answers are served (and charged) without being cached, so each lookup of them asks the upstream again until a write succeeds',
        { error: String((error as Error)?.message ?? error).slice(0, 500) },
      );
      gauge();
    },
    cacheWritten() {
      if (cacheDownSince === 0) return;
      const downMs = Date.now() - cacheDownSince;
      cacheDownSince = 0;
      logger.info(`store caches upstream answers again after ${(downMs / 1000).toFixed(1)} s`, { downMs });
      gauge();
    },
    degraded() {
      const what: string[] = [];
      if (storeDown)
        what.push('it does not take writes: lookups that charge or record are answered SERVICE_UNAVAILABLE');
      if (cacheDownSince !== 0)
        what.push('fetched upstream answers cannot be cached: each is served, and fetched again at its next lookup');
      return what.length === 0 ? null : what.join('; ');
    },
  };
}
