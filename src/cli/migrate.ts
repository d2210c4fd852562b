// `reglookup migrate`: brings the store's schema up to this release, and says what it did. The
// service does the same at start-up; this is for running it on its own (before a rolling upgrade,
// or with `docker compose run`).

import type { Command } from 'commander';
import { isMigratable, redactUrl } from '../store/open';
import { config, fatal, withStore } from './common';

async function runMigrate(): Promise<void> {
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
    process.stdout.write(
      `${url}: schema version ${report.version}${report.applied.length === 0 ? ', nothing to apply' : ''}\n`,
    );
  });
}

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("bring the store's schema up to this release (the service also does this at start-up)")
    .action(() => runMigrate().catch(fatal));
}
