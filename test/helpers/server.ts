// Starts the real service on a loopback port for a test file: a fresh SQLite store (in memory
// unless a DATABASE_URL is given) loaded with the bundled sample data.

import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { createHttpServer, createService, loadSampleIfEmpty, type Service, type ServiceOptions } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/ops/logger';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly server: http.Server;
  readonly store: VehicleStore;
  readonly config: Config;
  /** The service's batch jobs (for the admin listener of a test). */
  readonly batches: Service['batches'];
  /** Writes the usage records counted so far. */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The rate limit is off unless a test sets RATE_LIMIT: most tests send thousands of lookups as one
 * username, which the default limit would refuse.
 */
export async function startServer(
  env: Record<string, string> = {},
  opts: { sample?: boolean; store?: VehicleStore; service?: ServiceOptions } = {},
): Promise<TestServer> {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    RATE_LIMIT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    ...env,
  });
  const logger = createLogger(config.logLevel, config.logFormat);
  const store =
    opts.store ??
    openStore(config.databaseUrl, {
      pool: config.databasePool,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      cacheTtlMs: config.cacheTtlMs,
    });
  if (opts.sample !== false) await loadSampleIfEmpty(store, logger);
  const service = await createService(config, store, logger, opts.service);
  const server = createHttpServer(service, config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    store,
    config,
    batches: service.batches,
    flushUsage: () => service.flushUsage(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
      await store.close();
    },
  };
}
