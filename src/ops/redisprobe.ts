// Readiness for REDIS_URL: a small client of its own that PINGs when /readyz is asked. The rate
// limiter has its own client (src/accounts/limiter.ts) with options for lookups (a 1 s command
// timeout, quick reconnects); this one only answers probes. Letting the limiter's client answer
// them instead would save a connection per process; it has not been done.

import Redis from 'ioredis';
import type { ReadinessProbe } from './health';

/** A connection under way is waited for (the probe's own timeout bounds it); any other state fails at once. */
function untilReady(client: Redis): Promise<void> {
  if (client.status !== 'connecting' && client.status !== 'connect' && client.status !== 'wait') return Promise.reject(new Error(`Redis connection is ${client.status}`));
  return new Promise((resolve, reject) => {
    const ready = () => {
      client.off('error', failed);
      resolve();
    };
    const failed = (e: Error) => {
      client.off('ready', ready);
      reject(e);
    };
    client.once('ready', ready);
    client.once('error', failed);
  });
}

export function redisProbe(url: string): { probe: ReadinessProbe; close(): Promise<unknown> } {
  const client = new Redis(url, {
    lazyConnect: true,
    // A probe must fail fast rather than queue behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Failures are reported by the probe (and logged by /readyz), not as unhandled 'error' events.
  client.on('error', () => undefined);
  client.connect().catch(() => undefined);
  return {
    probe: { name: 'redis', check: () => (client.status === 'ready' ? client.ping() : untilReady(client).then(() => client.ping())) },
    close: () => client.quit().catch(() => client.disconnect()),
  };
}
