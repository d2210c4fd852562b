// `reglookup serve`: one process, or with WORKERS > 1 a primary that prepares the store and forks
// workers sharing the port.

import cluster from 'node:cluster';
import type { Command } from 'commander';
import { createHttpServer, createService, ensurePrepared, loadSampleIfEmpty } from '../app';
import type { Config } from '../config';
import { createLogger } from '../ops/logger';
import { tuneHeap } from '../ops/memory';
import type { Logger } from '../ops/logger';
import { isMigratable, redactUrl } from '../store/open';
import type { VehicleStore } from '../store/store';
import { config, fatal, openConfiguredStore } from './common';

/** Brings a migrated store's schema up to date before anything else touches it, and says what changed. */
async function migrateAtStart(store: VehicleStore, logger: Logger): Promise<void> {
  if (!isMigratable(store)) return;
  const report = await store.migrate();
  if (report.applied.length > 0) logger.info('applied migrations', { versions: report.applied.map((m) => m.version), version: report.version });
}

/** WORKERS > 1: the primary prepares the store once, then forks workers that share the port. */
async function supervise(cfg: Config): Promise<void> {
  const logger = createLogger(cfg.logLevel, cfg.logFormat);
  const store = openConfiguredStore(cfg);
  await migrateAtStart(store, logger);
  if (cfg.loadSampleData) await loadSampleIfEmpty(store, logger);
  // Once here, so that the workers find the stored answers current instead of racing to prepare them.
  await ensurePrepared(store, logger);
  await store.close();
  let stopping = false;
  for (let i = 0; i < cfg.workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error('worker exited; starting another', { pid: worker.process.pid, code, signal });
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 6000).unref();
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function serve(): Promise<void> {
  const cfg = config();
  if (cfg.workers > 1 && cluster.isPrimary) return supervise(cfg);
  tuneHeap();
  const logger = createLogger(cfg.logLevel, cfg.logFormat);
  const store = openConfiguredStore(cfg);
  if (cluster.isPrimary) await migrateAtStart(store, logger);
  if (cfg.loadSampleData && cluster.isPrimary) await loadSampleIfEmpty(store, logger);
  process.on('unhandledRejection', (e) => logger.error('unhandled rejection', { error: String((e as Error)?.stack ?? e) }));
  process.on('uncaughtException', (e) => {
    logger.error('uncaught exception; exiting', { error: String(e?.stack ?? e) });
    logger.on('finish', () => process.exit(1));
    logger.end();
    setTimeout(() => process.exit(1), 1000).unref();
  });
  const service = await createService(cfg, store, logger);
  const server = createHttpServer(service, cfg);
  server.on('error', (e) => fatal(e));
  server.listen(cfg.port, cfg.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
    logger.info('listening', { url: `http://${cfg.host === '0.0.0.0' ? 'localhost' : cfg.host}:${port}/api/reg.asmx`, database: redactUrl(cfg.databaseUrl) });
  });
  const stop = () => {
    logger.info('shutting down');
    server.close(() => void store.close().then(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

export function registerServe(program: Command): void {
  program.command('serve').description('serve /api/reg.asmx (configuration from the environment)').action(() => serve().catch(fatal));
}
