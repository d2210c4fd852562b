// `reglookup users ...`: managing the callers.

import type { Command } from 'commander';
import { fatal, withStore } from './common';

function credits(value: string | undefined): number | null {
  if (value === undefined || value === 'unlimited') return null;
  if (!/^\d+$/.test(value)) fatal(new Error(`--credits must be a whole number or 'unlimited', got '${value}'`));
  return Number(value);
}

export function registerUsers(program: Command): void {
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
}
