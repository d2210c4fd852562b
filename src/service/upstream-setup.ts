// Builds the upstream chain from the configuration (PROVIDERS and the UPSTREAM_* settings), with
// its readiness probe and, for providers that report an allowance (RegCheck's credits), the
// periodic reading of it into a metric. None when PROVIDERS names no upstream.

import { messageOf } from '../core/errors';
import type { Config } from '../config';
import type { ReadinessProbe } from '../ops/health';
import type { Logger } from '../ops/logger';
import type { Metrics } from '../ops/metrics';
import type { CacheWriteWatch } from '../ops/storewatch';
import { tracedProvider, type Tracing } from '../ops/tracing';
import { upstreamHttp } from '../providers/http';
import { reportsRemaining } from '../providers/provider';
import { buildProviders } from '../providers/registry';
import type { VehicleStore } from '../store/store';
import { UpstreamChain } from './upstream';

export interface UpstreamSetup {
  readonly chain: UpstreamChain;
  /**
   * One per provider, named upstream:NAME: its breaker open or half-open leaves the service ready
   * (stored and cached answers still flow) and says so as degraded. The upstream itself is not
   * called for it (a probe every few seconds would spend its quota).
   */
  readonly probes: readonly ReadinessProbe[];
  /** Stops the periodic reads. */
  stop(): void;
}

export function upstreamChain(
  config: Config,
  store: VehicleStore,
  metrics: Metrics | null,
  log: Logger,
  tracing: Tracing | null = null,
  cacheWatch: CacheWriteWatch | null = null,
): UpstreamSetup | null {
  const u = config.upstream;
  if (u.providers.length === 0) return null;
  // With tracing on, each call to a provider is a span (ops/tracing.ts).
  const providers = buildProviders(config, log).map((p) => (tracing ? tracedProvider(p, tracing) : p));
  const http = upstreamHttp(u.maxBytes);
  const chain = new UpstreamChain(store, providers, http, u, metrics, Date.now, {
    log,
    ...(cacheWatch ? { cache: cacheWatch } : {}),
  });
  const timers: NodeJS.Timeout[] = [];
  for (const p of providers) {
    if (!reportsRemaining(p) || u.regcheck.creditsIntervalMs === 0) continue;
    const read = () => {
      p.remaining({ http, signal: AbortSignal.timeout(u.timeoutMs) }).then(
        (left) => metrics?.upstreamRemaining(p.name, left),
        (e: unknown) =>
          log.warn('could not read an upstream allowance', {
            provider: p.name,
            error: messageOf(e),
          }),
      );
    };
    read();
    const t = setInterval(read, u.regcheck.creditsIntervalMs);
    t.unref();
    timers.push(t);
  }
  const probes: ReadinessProbe[] = providers.map((p) => ({
    name: `upstream:${p.name}`,
    degraded: `its circuit breaker is open after repeated failures; stored and cached answers are served, and lookups that need ${p.name} are refused with SERVICE_UNAVAILABLE`,
    check: async () => {
      const state = chain.states().find((s) => s.name === p.name)?.state;
      if (state !== 'closed') throw new Error(`${p.name} breaker ${state}`);
    },
  }));
  // A provider with a dependency of its own (dvsa's quota in Redis) says how that is.
  for (const p of new Set(providers)) {
    const own = (p as { readinessProbe?: () => ReadinessProbe | null }).readinessProbe?.();
    if (own) probes.push(own);
  }
  const stop = () => {
    timers.forEach((t) => clearInterval(t));
    // A provider holding connections of its own (dvsa's Redis for its quota) lets go of them.
    for (const p of providers) void (p as { close?: () => Promise<void> }).close?.();
  };
  return { chain, probes, stop };
}
