// `reglookup serve`: one process, or with WORKERS > 1 a primary that prepares the store and forks
// workers sharing the port. Start-up failures name their cause and the variable behind it and
// exit 2; SIGTERM/SIGINT drain the requests in flight and exit 0.

import cluster from 'node:cluster';
import path from 'node:path';
import type http from 'node:http';
import net from 'node:net';
import type { Command } from 'commander';
import { createAdminServer } from '../admin/server';
import type { AdminBatches } from '../admin/batch';
import { createHttpServer, createService, sampleAtStart } from '../app';
import { messageOf, stackOf } from '../core/errors';
import { ConfigError, DEFAULT_DATABASE_URL, type Config } from '../config';
import { hostSharedLimits } from '../accounts/limiter';
import { createLogger, type Logger } from '../ops/logger';
import { tuneHeap } from '../ops/memory';
import { clusterMetrics, metrics } from '../ops/metrics';
import { createMetricsServer } from '../ops/metricsport';
import { createdStoreNotice, isMigratable, newSqliteFile, redactUrl, storeUnavailable } from '../store/open';
import type { VehicleStore } from '../store/store';
import { config, openConfiguredStore, startupFailed } from './common';
import { guessableCount } from '../accounts/manage';

/** Something shutdown closes after the last answer: the store, Redis (#12 adds its client here), ... */
interface Closer {
  readonly name: string;
  close(): Promise<unknown>;
}

const redact = redactUrl;

/** Brings a migrated store's schema up to date before anything else touches it, and says what changed. */
async function migrateAtStart(store: VehicleStore, logger: Logger): Promise<void> {
  if (!isMigratable(store)) return;
  const report = await store.migrate();
  if (report.applied.length > 0)
    logger.info('applied migrations', { versions: report.applied.map((m) => m.version), version: report.version });
  const accounts = report.accounts;
  if (accounts && accounts.applied.length > 0)
    logger.info('applied migrations to the accounts file', {
      versions: accounts.applied.map((m) => m.version),
      version: accounts.version,
    });
  if (report.applied.length === 0 && (accounts?.applied.length ?? 0) === 0) return;
  const guessable = await guessableCount(store);
  if (guessable > 0)
    logger.warn('callers with guessable usernames', {
      count: guessable,
      next: 'reglookup users list --suspicious, then reglookup users rotate NAME',
    });
}

/**
 * The store DATABASE_URL names, brought up to date (when `migrate`: the primary process) and asked
 * once, so that a store that cannot serve (unreachable, or written by a newer release) fails here by name.
 */
async function openNamedStore(cfg: Config, logger: Logger, migrate: boolean): Promise<VehicleStore> {
  let store: VehicleStore | undefined;
  // A SQLite file that is not there is created: say so, since a mistyped path is the usual reason.
  const created = migrate ? newSqliteFile(cfg.databaseUrl) : null;
  try {
    store = openConfiguredStore(cfg);
    // The default store is made on a first start, as the README says: worth a line, not a warning.
    if (created && cfg.databaseUrl === DEFAULT_DATABASE_URL)
      logger.info(`created the store at ${path.resolve(created)} (first start)`, { database: redact(cfg.databaseUrl) });
    else if (created) logger.warn(createdStoreNotice(created), { database: redact(cfg.databaseUrl) });
    // Before anything else touches it, so that the versions applied are logged here.
    if (migrate) await migrateAtStart(store, logger);
    await store.isEmpty();
    return store;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    await store?.close().catch(() => undefined);
    throw storeUnavailable(cfg.databaseUrl, e);
  }
}

/** server.listen as a promise, its failure as a message naming the variable to change. */
function listen(server: http.Server, port: number, host: string, portVar: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why: Record<string, string> = {
        EADDRINUSE: `${portVar} ${port} is already in use on ${host} (another reglookup, or another program); choose another ${portVar}`,
        EACCES: `${portVar} ${port} may not be listened on by this user (ports below 1024 need privileges); choose another ${portVar}`,
        EADDRNOTAVAIL: `HOST '${host}' is not an address of this machine; use 0.0.0.0 (every IPv4 address), :: or one of this machine's addresses`,
        ENOTFOUND: `HOST '${host}' does not resolve to an address of this machine`,
        EAI_AGAIN: `HOST '${host}' could not be resolved (name lookup failed)`,
      };
      reject(new ConfigError(why[e.code ?? ''] ?? `cannot listen on ${where} (${portVar}, HOST): ${e.message}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

/**
 * SIGTERM and SIGINT: a graceful stop that resets no connection.
 *  1. Drain (SIGTERM only, SHUTDOWN_DRAIN_MS): /readyz answers 503 so that a load balancer stops
 *     sending, while every request still arriving, on new or kept-alive connections, is answered,
 *     each answer with `Connection: close`. A client that keeps sending on a kept-alive connection
 *     is told to close it by an answer, never has it closed under a request it is writing.
 *  2. Stop listening; requests in flight are answered (with `Connection: close`); connections that
 *     carry no request half a second later (their clients sent nothing) are closed.
 *  3. Requests still unanswered SHUTDOWN_TIMEOUT_MS after that are cut; the closers are closed and
 *     the process exits: 0 when every request was answered, 1 when some had to be cut.
 * SIGINT (Ctrl-C at a terminal, where no load balancer waits on /readyz) skips the drain.
 */
/** How often a service started by npm looks whether the process that started it is still there. */
const PARENT_CHECK_MS = 1000;

/**
 * npx runs the service through a shell (npm, then `sh -c`, then node): npm passes a SIGTERM on to the shell, which
 * exits without passing it further, and the service would go on serving with no one left to stop it. A parent
 * that is gone leaves the process to another one, so a changed parent pid is taken as that SIGTERM.
 */
function stopWhenParentExits(cfg: Config, stop: (signal: NodeJS.Signals) => void, logger: Logger): void {
  if (!cfg.stopWithParent) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    logger.info('the process that started this one exited', { parentPid: parent });
    stop('SIGTERM');
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** After the listener closes: how long a connection with no request yet has to send one before it is closed as idle. */
const IDLE_GRACE_MS = 500;

function drainOnSignals(
  servers: readonly http.Server[],
  beginShutdown: () => void,
  closers: readonly Closer[],
  cfg: Config,
  logger: Logger,
): void {
  let stopping = false;
  const close = () => {
    let cut = false;
    const timer = setTimeout(() => {
      cut = true;
      logger.warn('shutdown timeout: cutting the requests still in flight', { timeoutMs: cfg.shutdownTimeoutMs });
      for (const s of servers) s.closeAllConnections();
    }, cfg.shutdownTimeoutMs);
    // net.Server's close, not http.Server's: the latter also closes every connection without a
    // request in flight at once, among them those accepted a moment ago whose request is on its
    // way, and their clients see a reset. Those are given IDLE_GRACE_MS to send it.
    const closed = servers.map(
      (s) => new Promise<void>((resolve) => net.Server.prototype.close.call(s, () => resolve())),
    );
    const idle = setTimeout(() => {
      for (const s of servers) s.closeIdleConnections();
    }, IDLE_GRACE_MS);
    void Promise.all(closed).then(async () => {
      clearTimeout(timer);
      clearTimeout(idle);
      for (const c of closers) {
        try {
          await c.close();
        } catch (e) {
          logger.error('could not close on shutdown', { what: c.name, error: messageOf(e) });
        }
      }
      logger.info('stopped', { cut });
      process.exit(cut ? 1 : 0);
    });
  };
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const drainMs = signal === 'SIGTERM' ? cfg.shutdownDrainMs : 0;
    logger.info('shutting down', { signal, drainMs, timeoutMs: cfg.shutdownTimeoutMs });
    beginShutdown();
    if (drainMs > 0) setTimeout(close, drainMs);
    else close();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  stopWhenParentExits(cfg, stop, logger);
}

/** The admin listener (ADMIN_PORT), on `store`; its tokens' names are logged, never the tokens. */
async function listenAdmin(
  cfg: Config,
  store: VehicleStore,
  logger: Logger,
  metricsText: (() => Promise<string>) | null,
  batches: AdminBatches | null = null,
): Promise<http.Server> {
  const server = createAdminServer({
    store,
    batches,
    tokens: cfg.adminTokens,
    logger,
    metricsText,
    requestTimeoutMs: cfg.requestTimeoutMs,
    rotationGraceS: cfg.rotationGraceS,
  });
  const port = await listen(server, cfg.adminPort as number, cfg.adminHost, 'ADMIN_PORT');
  logger.info('admin API listening', {
    url: `http://${cfg.adminHost === '0.0.0.0' ? 'localhost' : cfg.adminHost}:${port}/admin/`,
    tokens: cfg.adminTokens.map((t) => t.name),
  });
  return server;
}

/** WORKERS > 1: the primary migrates the store (and loads the sample) once, then forks workers that share the port. */
async function supervise(cfg: Config): Promise<void> {
  const logger = createLogger(cfg.logLevel, cfg.logFormat);
  const store = await openNamedStore(cfg, logger, true);
  await sampleAtStart(store, cfg, logger);
  await store.close();
  // Without Redis the workers share one rate limit, kept here and asked over the cluster's IPC.
  if (!cfg.redisUrl)
    hostSharedLimits(
      { burst: cfg.rateLimitBurst, redisUrl: null, redisPrefix: cfg.redisPrefix, onError: cfg.rateLimitOnRedisError },
      logger,
    );
  // Workers answer GET /metrics by asking here; METRICS_PORT is served from here.
  const metricsText = cfg.metrics ? clusterMetrics() : null;
  const metricsServer = metricsText && cfg.metricsPort !== null ? createMetricsServer(metricsText, logger) : null;
  if (metricsServer && cfg.metricsPort !== null) await listen(metricsServer, cfg.metricsPort, cfg.host, 'METRICS_PORT');
  // The admin API is served from here for every worker, on a store of its own.
  const adminStore = cfg.adminPort !== null ? await openNamedStore(cfg, logger, false) : null;
  const adminServer = adminStore ? await listenAdmin(cfg, adminStore, logger, metricsText) : null;

  let stopping = false;
  let failed = false;
  let startFailed = false;
  const finish = (code: number) => {
    metricsServer?.closeAllConnections();
    metricsServer?.close();
    adminServer?.closeAllConnections();
    adminServer?.close();
    if (adminStore) void adminStore.close().finally(() => process.exit(code));
    else process.exit(code);
  };
  for (let i = 0; i < cfg.workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (code !== 0) failed = true;
    if (code === 2) startFailed = true;
    if (!stopping && code === 2) {
      // A worker's start-up failure (its message is on stderr already): the others would fail the same way.
      logger.error('a worker could not start; stopping', { pid: worker.process.pid });
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    }
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) finish(startFailed ? 2 : failed ? 1 : 0);
      return;
    }
    logger.error('worker exited; starting another', { pid: worker.process.pid, code, signal });
    cluster.fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down: stopping the workers', { signal, workers: Object.keys(cluster.workers ?? {}).length });
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    // The workers drain, then cut what is left at SHUTDOWN_TIMEOUT_MS; a worker that still has not exited then is
    // stuck.
    setTimeout(
      () => {
        logger.error('workers did not stop in time; killing them');
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        finish(1);
      },
      cfg.shutdownDrainMs + cfg.shutdownTimeoutMs + 5000,
    ).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  stopWhenParentExits(cfg, stop, logger);
}

async function serve(): Promise<void> {
  const cfg = config();
  if (cfg.workers > 1 && cluster.isPrimary) return supervise(cfg);
  tuneHeap();
  const logger = createLogger(cfg.logLevel, cfg.logFormat);
  // Made before the sample data is loaded so that its import is counted.
  if (cfg.metrics) metrics();
  const store = await openNamedStore(cfg, logger, cluster.isPrimary);
  if (cluster.isPrimary) await sampleAtStart(store, cfg, logger);
  process.on('unhandledRejection', (e) => logger.error('unhandled rejection', { error: stackOf(e) }));
  process.on('uncaughtException', (e) => {
    logger.error('uncaught exception; exiting', { error: stackOf(e) });
    logger.on('finish', () => process.exit(1));
    logger.end();
    setTimeout(() => process.exit(1), 1000).unref();
  });
  const separateMetrics = cfg.metrics && cfg.metricsPort !== null;
  const service = await createService(cfg, store, logger, {
    metricsOnServicePort: separateMetrics ? 'none' : cluster.isWorker ? 'cluster' : 'process',
  });
  const server = createHttpServer(service, cfg);
  const servers = [server];
  // With WORKERS > 1 the primary serves METRICS_PORT for all of them.
  if (separateMetrics && cfg.metricsPort !== null && cluster.isPrimary) {
    const registry = metrics().registry;
    const metricsServer = createMetricsServer(() => registry.metrics(), logger);
    await listen(metricsServer, cfg.metricsPort, cfg.host, 'METRICS_PORT');
    servers.push(metricsServer);
  }
  // The admin API: one listener, in the process that is not a worker (WORKERS > 1: the primary's, supervise).
  if (cfg.adminPort !== null && cluster.isPrimary)
    servers.push(
      await listenAdmin(cfg, store, logger, cfg.metrics ? () => metrics().registry.metrics() : null, service.batches),
    );
  const port = await listen(server, cfg.port, cfg.host, 'PORT');
  server.on('error', (e) => logger.error('server error', { error: String(e?.message ?? e) }));
  logger.info('listening', {
    url: `http://${cfg.host === '0.0.0.0' ? 'localhost' : cfg.host}:${port}/api/reg.asmx`,
    database: redact(cfg.databaseUrl),
  });
  // Usage counted but not yet written, and the rate limiter's Redis, go before the store closes.
  const closers: Closer[] = [
    { name: 'service', close: () => service.close() },
    { name: 'store', close: () => store.close() },
  ];
  drainOnSignals(servers, () => service.beginShutdown(), closers, cfg, logger);
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve /api/reg.asmx (configuration from the environment)')
    .action(() => serve().catch(startupFailed));
}
