// `reglookup migrate`: brings the store's schema up to this release, and says what it did. The
// service does the same at start-up; this is for running it on its own (before a rolling upgrade,
// or with `docker compose run`). `migrate --to 6` takes a SQLite store back to the layout of the
// releases before its accounts file (0.3), for going back to one of them.

import type { Command } from 'commander';
import { isMigratable, newSqliteFile, redactUrl, sqliteFileOf } from '../store/open';
import { guessableCount } from '../accounts/manage';
import { moveAccountsBack } from '../store/sqlite-layout';
import { config, fatal, withStore } from './common';

async function runMigrate(flags: { to?: string }): Promise<void> {
  if (flags.to !== undefined) return runBack(flags.to);
  const url = redactUrl(config().databaseUrl);
  await withStore(async (store) => {
    if (!isMigratable(store)) {
      // Every store this release has is migratable (SQLite and PostgreSQL); a store without
      // versioned steps would have brought its schema up to date when withStore opened it.
      process.stdout.write(`${url}: schema is up to date\n`);
      return;
    }
    const report = await store.migrate();
    for (const m of report.applied) process.stdout.write(`applied ${m.version}: ${m.name}\n`);
    const accounts = report.accounts;
    for (const m of accounts?.applied ?? []) process.stdout.write(`applied accounts file ${m.version}: ${m.name}\n`);
    const none = report.applied.length === 0 && (accounts?.applied.length ?? 0) === 0;
    process.stdout.write(
      `${url}: schema version ${report.version}${accounts ? ` (accounts file ${accounts.version})` : ''}${none ? ', nothing to apply' : ''}\n`,
    );
    const guessable = none ? 0 : await guessableCount(store);
    if (guessable > 0)
      process.stderr.write(
        `${guessable} caller(s) have a guessable username (short, or holding an invisible character): reglookup users list --suspicious, then reglookup users rotate NAME\n`,
      );
  });
}

/** `--to 6`: the store opened by nothing else, its callers moved back into the records file. */
async function runBack(to: string): Promise<void> {
  const cfg = config();
  const file = sqliteFileOf(cfg.databaseUrl);
  if (to !== '6')
    throw new Error(`--to takes 6 only (the schema of the releases before the accounts file), not '${to}'`);
  if (file === null || file === ':memory:')
    throw new Error('--to 6 is for a SQLite store (DATABASE_URL sqlite:PATH); PostgreSQL keeps one layout');
  if (newSqliteFile(cfg.databaseUrl))
    throw new Error(`DATABASE_URL '${cfg.databaseUrl}': no store at ${file} (nothing to take back; check the path)`);
  const done = moveAccountsBack(file);
  if (done.moved) process.stdout.write(`moved the callers back into ${file} and removed ${done.accountsFile}\n`);
  process.stdout.write(
    `${redactUrl(cfg.databaseUrl)}: schema version 6${done.moved ? '' : ', nothing to take back'}: a release before the accounts file (0.3) opens it; this one would move the callers out again\n`,
  );
}

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("bring the store's schema up to this release (the service also does this at start-up)")
    .option(
      '--to <version>',
      'SQLite: 6 takes the store back to the one-file layout of the releases before its accounts file (0.3), to go back to one of them; run it with the service stopped',
    )
    .action((flags: { to?: string }) => runMigrate(flags).catch(fatal));
}
