// What the service does when its store (PostgreSQL) stops being reachable and comes back: one log
// line each way (no stack, no line per request: callers are answered SERVICE_UNAVAILABLE meanwhile)
// and the reglookup_store_up gauge and reglookup_store_unavailable_total counter.

import type { StoreWatcher } from '../store/store';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export function storeWatcher(logger: Logger, metrics: Metrics | null): StoreWatcher {
  return {
    down(store, error) {
      logger.error(`store unavailable: ${store} cannot be reached; lookups are answered SERVICE_UNAVAILABLE (503, Retry-After) until it answers again`, { store, error });
      metrics?.storeUp(false);
    },
    up(store, downMs) {
      logger.info(`store back: ${store} is reachable again after ${(downMs / 1000).toFixed(1)} s`, { store, downMs });
      metrics?.storeUp(true);
    },
    refused(_store, calls) {
      metrics?.storeUnavailable(calls);
    },
  };
}
