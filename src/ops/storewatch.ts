// What the service does when its store stops serving and comes back (PostgreSQL cannot be reached;
// SQLite's disk is full): one log line each way (no stack, no line per request: callers are answered
// SERVICE_UNAVAILABLE meanwhile) and the reglookup_store_up gauge and reglookup_store_unavailable_total counter.

import type { StoreWatcher } from '../store/store';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export function storeWatcher(logger: Logger, metrics: Metrics | null): StoreWatcher {
  return {
    down(store, error, problem = 'cannot be reached') {
      logger.error(
        `store unavailable: ${store} ${problem}; lookups that need it are answered SERVICE_UNAVAILABLE (503, Retry-After) until it serves again`,
        { store, error },
      );
      metrics?.storeUp(false);
    },
    up(store, downMs, state = 'is reachable again') {
      logger.info(`store back: ${store} ${state} after ${(downMs / 1000).toFixed(1)} s`, { store, downMs });
      metrics?.storeUp(true);
    },
    refused(_store, calls) {
      metrics?.storeUnavailable(calls);
    },
  };
}
