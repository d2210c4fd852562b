#!/usr/bin/env node
// `reglookup serve | import FILE | users ...`: the command line, and what `npm start` runs.

import cluster from 'node:cluster';
import { Command } from 'commander';
import { createHttpServer, createService, ensurePrepared, loadSampleIfEmpty } from './app';
import { ConfigError, loadConfig, type Config } from './config';
import { ContractError } from './contract/wsdl';
import { createLogger } from './ops/logger';
import { tuneHeap } from './ops/memory';
import { importFile } from './store/import';
import { openStore } from './store/open';
import { PREPARED_FORMS } from './transport/prepared';

function config(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`reglookup: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

function fatal(e: unknown): never {
  const msg = e instanceof ConfigError || e instanceof ContractError ? e.message : (e as Error)?.message ?? String(e);
  process.stderr.write(`reglookup: ${msg}\n`);
  process.exit(1);
}

/** WORKERS > 1: the primary prepares the store once, then forks workers that share the port. */
async function supervise(cfg: Config): Promise<void> {
  const logger = createLogger(cfg.logLevel, cfg.logFormat);
  const store = openStore(cfg.databaseUrl);
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
  const store = openStore(cfg.databaseUrl);
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
    logger.info('listening', { url: `http://${cfg.host === '0.0.0.0' ? 'localhost' : cfg.host}:${port}/api/reg.asmx`, database: cfg.databaseUrl.replace(/\/\/[^@/]*@/, '//***@') });
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

async function runImport(file: string): Promise<void> {
  const cfg = config();
  const store = openStore(cfg.databaseUrl);
  try {
    const report = await importFile(store, file, PREPARED_FORMS);
    if (!report.committed) {
      for (const e of report.errors) process.stderr.write(`${file}:${e.line}: ${e.reason}\n`);
      if (report.invalid > report.errors.length) process.stderr.write(`... and ${report.invalid - report.errors.length} more invalid lines\n`);
      process.stderr.write(`reglookup: ${report.invalid} invalid line(s) of ${report.lines}; nothing was imported\n`);
      process.exitCode = 1;
      return;
    }
    const parts = Object.entries(report.byOperation)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([op, n]) => `${op} ${n}`);
    process.stdout.write(`imported ${report.imported} record(s) from ${report.lines} line(s)${parts.length ? `: ${parts.join(', ')}` : ''}\n`);
  } finally {
    await store.close();
  }
}

async function withStore<T>(fn: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(config().databaseUrl);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function credits(value: string | undefined): number | null {
  if (value === undefined || value === 'unlimited') return null;
  if (!/^\d+$/.test(value)) fatal(new Error(`--credits must be a whole number or 'unlimited', got '${value}'`));
  return Number(value);
}

const program = new Command();
program.name('reglookup').description('Vehicle registration lookup service (SOAP 1.1/1.2, HTTP GET/POST)');
program.command('serve').description('serve /api/reg.asmx (configuration from the environment)').action(() => serve().catch(fatal));
program
  .command('import')
  .argument('<file>', 'NDJSON file, one record per line')
  .description('import vehicles and MOT histories; all or nothing')
  .action((file: string) => runImport(file).catch(fatal));
const users = program.command('users').description('manage usernames (for USERNAME_POLICY=registered and credits)');
users
  .command('add')
  .argument('<username>')
  .option('--credits <n>', "lookups allowed, or 'unlimited'", 'unlimited')
  .description('register a username, or change its credits')
  .action((name: string, opts: { credits?: string }) =>
    withStore((s) => s.putAccount({ username: name, credits: credits(opts.credits) }))
      .then(() => {
        process.stdout.write(`saved ${name}\n`);
      })
      .catch(fatal),
  );
users
  .command('remove')
  .argument('<username>')
  .action((name: string) =>
    withStore((s) => s.removeAccount(name))
      .then((gone) => {
        process.stdout.write(gone ? `removed ${name}\n` : `no such username: ${name}\n`);
        if (!gone) process.exitCode = 1;
      })
      .catch(fatal),
  );
users
  .command('list')
  .action(() =>
    withStore((s) => s.listAccounts())
      .then((list) => {
        for (const a of list) process.stdout.write(`${a.username}\t${a.credits === null ? 'unlimited' : a.credits}\n`);
      })
      .catch(fatal),
  );
program.parseAsync(process.argv).catch(fatal);
