// `reglookup audit`: the audit log, newest first: every change made to a caller through the admin
// API (by token name) or `reglookup users` (cli:<user>), with the settings before and after.

import type { Command } from 'commander';
import { fatal, withStore } from './common';

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .option('--limit <n>', 'entries to show, newest first', '50')
    .option('--json', 'one JSON array')
    .description('the audit log: who changed which caller, when, and what it was before and after')
    .action((opts: { limit: string; json?: boolean }) =>
      (async () => {
        if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 100_000)
          throw new Error(`--limit must be a whole number between 1 and 100000, got '${opts.limit}'`);
        const entries = await withStore((s) => s.admin.audit(0, Number(opts.limit)), { mustExist: true });
        if (opts.json) {
          process.stdout.write(JSON.stringify(entries, null, 2) + '\n');
          return;
        }
        for (const e of entries) {
          process.stdout.write(
            `${e.at}  ${e.actor}  ${e.action} ${JSON.stringify(e.target)}  before: ${JSON.stringify(e.before)}  after: ${JSON.stringify(e.after)}\n`,
          );
        }
      })().catch(fatal),
    );
}
