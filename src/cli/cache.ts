// `reglookup cache stats|purge [--operation OP] [--registration REG]`: what the upstream cache holds
// (answers fetched from upstream providers, docs/upstream.md), and emptying it, all or in part. It
// never touches an imported record.

import type { Command } from 'commander';
import { cacheFilterOf } from '../service/cachefilter';
import type { CacheFilter } from '../store/cache';
import { fatal, withStore } from './common';

interface CacheFlags {
  operation?: string;
  registration?: string;
}

function filterOf(flags: CacheFlags): CacheFilter {
  return cacheFilterOf(flags.operation, flags.registration, (field) => `--${field}`);
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function runStats(flags: CacheFlags): Promise<void> {
  const filter = filterOf(flags);
  await withStore(async (store) => {
    const rows = await store.cacheStats(filter);
    let found = 0;
    let notFound = 0;
    for (const r of rows) {
      found += r.found;
      notFound += r.notFound;
      process.stdout.write(
        `${r.operation} ${r.provider}: ${r.found} answer(s), ${r.notFound} not-found, fetched ${iso(r.oldest)} to ${iso(r.newest)}\n`,
      );
    }
    process.stdout.write(`${found + notFound} cached answer(s): ${found} found, ${notFound} not-found\n`);
  });
}

async function runPurge(flags: CacheFlags): Promise<void> {
  const filter = filterOf(flags);
  await withStore(async (store) => {
    const n = await store.cachePurge(filter);
    process.stdout.write(`purged ${n} cached answer(s); imported records are untouched\n`);
  });
}

export function registerCache(program: Command): void {
  const cache = program
    .command('cache')
    .description('the upstream cache: answers fetched from upstream providers (PROVIDERS)');
  const narrow = (c: Command) =>
    c
      .option('--operation <op>', 'only this operation (Check, UKMOT, ...)')
      .option('--registration <reg>', 'only this registration (spaces and case do not matter)');
  narrow(
    cache.command('stats').description('cached answers by operation and provider, with the oldest and newest fetch'),
  ).action((flags: CacheFlags) => runStats(flags).catch(fatal));
  narrow(
    cache
      .command('purge')
      .description(
        'remove cached answers (all, or those of one operation or registration); the next lookup fetches again',
      ),
  ).action((flags: CacheFlags) => runPurge(flags).catch(fatal));
}
