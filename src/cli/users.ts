// `reglookup users ...`: managing the callers, each known by its account's NAME (the store keeps a
// hash of the username, never the username: docs/security.md). A username is printed once, when it
// is made (add, rotate). Every input is checked before the store is touched; a bad one, or an unknown
// name, is one line on stderr and exit status 1.

import type { Command } from 'commander';
import { today, dayOf } from '../accounts/clock';
import fs from 'node:fs';
import os from 'node:os';
import { AccountAdmin, allowProblem, ManageError, rateProblem, SETTING_BOUNDS } from '../accounts/manage';
import { escapeInvisible } from '../accounts/username';
import { splitList } from '../net/cidr';
import { fingerprint } from '../ops/fingerprint';
import type { Account, AccountChanges, AccountSummary } from '../store/accounts';
import type { VehicleStore } from '../store/store';
import { usageCsv, usageRange } from '../admin/billing';
import { exportCallers, importCallers, parseCallers } from '../data/callers';
import { config, fatal, withStore } from './common';

class InputError extends Error {}

/** Who the audit log names for a change made with `reglookup users`: the machine's user. */
function cliActor(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // No entry for this uid (a container's arbitrary user): 'unknown'.
  }
  return `cli:${user}`;
}

function admin(store: VehicleStore): AccountAdmin {
  return new AccountAdmin(store, cliActor());
}

/** A refusal of the shared management logic, as this command's one line. */
async function managed<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ManageError) throw new InputError(e.message);
    throw e;
  }
}

/**
 * Every subcommand but `add` reads or changes what is there: a SQLite file that does not exist is
 * a mistyped DATABASE_URL, refused (as export does) instead of created empty.
 */
const EXISTING = { mustExist: true } as const;
/** Commands that may make the store (callers registered before the first start) say when they did. */
const SAY_CREATED = { sayCreated: true } as const;

interface SettingOptions {
  credits?: string;
  dailyLimit?: string;
  rate?: string;
  allow?: string;
}

const MAX_CREDITS = SETTING_BOUNDS.credits.max;

function whole(value: string, what: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new InputError(`${what} must be a whole number, got '${value}'`);
  const n = Number(value);
  if (n < min || n > max) throw new InputError(`${what} must be between ${min} and ${max}, got ${value}`);
  return n;
}

/** The settings the options give; absent options are absent from the result. */
function settings(opts: SettingOptions): AccountChanges {
  const out: { -readonly [K in keyof AccountChanges]: AccountChanges[K] } = {};
  if (opts.credits !== undefined)
    out.credits =
      opts.credits === 'unlimited' ? null : whole(opts.credits, "--credits (or 'unlimited')", 0, MAX_CREDITS);
  if (opts.dailyLimit !== undefined)
    out.dailyLimit =
      opts.dailyLimit === 'none'
        ? null
        : whole(
            opts.dailyLimit,
            "--daily-limit (or 'none')",
            SETTING_BOUNDS.dailyLimit.min,
            SETTING_BOUNDS.dailyLimit.max,
          );
  if (opts.rate !== undefined) {
    const r = opts.rate;
    if (r === 'default') out.rate = null;
    else if (r === 'none') out.rate = 0;
    else {
      if (!/^\d+(\.\d+)?$/.test(r))
        throw new InputError(`--rate must be lookups per second (e.g. 5 or 0.5), 'none' or 'default', got '${r}'`);
      const n = Number(r);
      const problem = rateProblem(n);
      if (problem) throw new InputError(`--rate ${problem}`);
      out.rate = n;
    }
  }
  if (opts.allow !== undefined) {
    if (opts.allow === 'any') out.allow = [];
    else {
      const list = splitList(opts.allow);
      if (list.length === 0)
        throw new InputError("--allow needs a comma-separated list of addresses or CIDRs, or 'any'");
      const problem = allowProblem(list);
      if (problem) throw new InputError(`--allow: ${problem}`);
      out.allow = list;
    }
  }
  return out;
}

/** A name fit for one line of a table: as it is, or JSON-quoted when it holds spaces or controls. */
function shown(name: string): string {
  return /^[\x21-\x7e\u00a0-\uffff]+$/.test(name) && !/[\u2028\u2029]/.test(name) ? name : JSON.stringify(name);
}

function describe(a: Account, defaultRate: number): Record<string, string> {
  return {
    enabled: a.enabled ? 'yes' : 'no',
    credits: a.credits === null ? 'unlimited' : String(a.credits),
    'daily limit': a.dailyLimit === null ? 'none' : String(a.dailyLimit),
    rate:
      a.rate === null
        ? defaultRate > 0
          ? `default (${defaultRate}/s)`
          : 'default (none)'
        : a.rate === 0
          ? 'none'
          : `${a.rate}/s`,
    allow: a.allow.length === 0 ? 'any' : a.allow.join(','),
  };
}

function summary(a: Account): string {
  const d = describe(a, config().rateLimit);
  return Object.entries(d)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

function jsonAccount(a: AccountSummary): Record<string, unknown> {
  return {
    name: a.name,
    prefix: a.prefix,
    enabled: a.enabled,
    credits: a.credits,
    usedToday: a.usedToday,
    dailyLimit: a.dailyLimit,
    rate: a.rate,
    allow: a.allow,
  };
}

type Action<A extends unknown[]> = (...args: A) => Promise<void>;

/** Runs a subcommand: input errors and store errors alike are one line on stderr and exit 1. */
function run<A extends unknown[]>(fn: Action<A>): (...args: A) => Promise<void> {
  return (...args: A) => fn(...args).catch(fatal);
}

function noSuch(name: string): never {
  throw new InputError(`no account named ${shown(name)}`);
}

function withSettings(cmd: Command): Command {
  return cmd
    .option('--credits <n>', "successful lookups allowed, or 'unlimited'")
    .option('--daily-limit <n>', "successful lookups per UTC day, or 'none'")
    .option('--rate <r>', "lookups per second (e.g. 5 or 0.5), 'none', or 'default' (RATE_LIMIT)")
    .option('--allow <cidrs>', "addresses or CIDRs it may be used from (e.g. 10.0.0.0/8,2001:db8::/32), or 'any'");
}

export function registerUsers(program: Command): void {
  const users = program
    .command('users')
    .description('manage callers by name: usernames, credits, limits, allow-lists, usage');
  registerAdd(users);
  registerChanges(users);
  registerStates(users);
  registerReports(users);
  registerMoves(users);
}

/** `users export` and `users import`: callers (settings, credits, allow-lists, usage) from one store to another. */
function registerMoves(users: Command): void {
  users
    .command('export')
    .argument('[file]', 'write here instead of stdout (- is stdout)')
    .description('every caller (settings, credits, allow-list, enabled) and its usage, as NDJSON for users import')
    .action(
      run(async (file: string | undefined) => {
        const lines: string[] = [];
        const n = await withStore((s) => exportCallers(s, (l) => lines.push(l)), EXISTING);
        const text = lines.map((l) => l + '\n').join('');
        if (file && file !== '-') fs.writeFileSync(file, text);
        else process.stdout.write(text);
        process.stderr.write(`exported ${n.callers} caller(s), ${n.usage} usage row(s)\n`);
      }),
    );
  users
    .command('import')
    .argument('<file>', 'a file written by users export (- reads standard input)')
    .description('add or update the callers of a users export file; usage is added for callers new to this store only')
    .action(
      run(async (file: string) => {
        let text: string;
        try {
          text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
        } catch (e) {
          throw new InputError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
        }
        let parsed: ReturnType<typeof parseCallers>;
        try {
          parsed = parseCallers(text.split('\n'));
        } catch (e) {
          throw new InputError((e as Error).message);
        }
        const n = await withStore((s) => importCallers(s, parsed, cliActor()), SAY_CREATED);
        process.stdout.write(`imported ${n.callers} caller(s) (${n.added} new), ${n.usage} usage row(s)\n`);
      }),
    );
}

/** `users add`: an account named NAME, with a username given or generated; `users rotate`: a new username. */
function registerAdd(users: Command): void {
  withSettings(users.command('add'))
    .argument('<name>', 'what people call the account (letters, digits, . _ @ -)')
    .option('--generate', 'make an unguessable username (128 random bits) and print it, once')
    .option('--username <username>', "the caller's username, chosen by you (the store keeps only its hash)")
    .description('add an account: a name, and its username (generated, or given)')
    .action(
      run(async (name: string, opts: SettingOptions & { generate?: boolean; username?: string }) => {
        if (opts.generate && opts.username !== undefined)
          throw new InputError('give --username or --generate, not both');
        if (!opts.generate && opts.username === undefined)
          throw new InputError('give --generate to make a username, or --username USERNAME');
        const changes = settings(opts);
        const { account, username } = await withStore(
          (s) => managed(admin(s).add({ name, username: opts.username, settings: changes })),
          SAY_CREATED,
        );
        if (opts.generate) {
          process.stdout.write(`${username}\n`);
          process.stderr.write(
            `added ${shown(name)} (${summary(account)}); the username above is shown this once: give it to the caller over a private channel\n`,
          );
        } else {
          process.stdout.write(`added ${shown(name)} (${summary(account)})\n`);
        }
      }),
    );

  users
    .command('rotate')
    .argument('<name>')
    .description(
      'give the account a new username (printed once); the old one stays valid for USERNAME_ROTATION_GRACE_S seconds',
    )
    .action(
      run(async (name: string) => {
        const grace = config().rotationGraceS;
        const r = await withStore((s) => managed(admin(s).rotate(name, grace)), EXISTING);
        process.stdout.write(`${r.username}\n`);
        process.stderr.write(
          `rotated ${shown(name)}: the username above is shown this once; the old one is valid until ${new Date(r.until).toISOString()}\n`,
        );
      }),
    );
}

/** `users set` and `users credit`: an account's settings and its balance. */
function registerChanges(users: Command): void {
  withSettings(users.command('set'))
    .argument('<name>')
    .description('change the settings of an account')
    .action(
      run(async (name: string, opts: SettingOptions) => {
        const changes = settings(opts);
        if (Object.keys(changes).length === 0)
          throw new InputError('nothing to set: give --credits, --daily-limit, --rate or --allow');
        const a = await withStore((s) => managed(admin(s).update(name, changes)), EXISTING);
        process.stdout.write(`saved ${shown(name)} (${summary(a)})\n`);
      }),
    );

  users
    .command('credit')
    .argument('<name>')
    .argument('<n>', 'credits to add; a negative number takes them away (never below 0)')
    .description('add credits to an account (or take them away)')
    .action(
      run(async (name: string, n: string) => {
        if (!/^-?\d+$/.test(n) || Math.abs(Number(n)) > MAX_CREDITS)
          throw new InputError(
            `credits must be a whole number (negative to take away), at most ${MAX_CREDITS} either way, got '${n}'`,
          );
        const result = await withStore(async (s) => {
          const a = await s.accounts.getAccountByName(name);
          if (!a) noSuch(name);
          if (a.credits === null)
            throw new InputError(
              `${shown(name)} has unlimited credits; give it a balance with 'reglookup users set ${shown(name)} --credits N'`,
            );
          return managed(admin(s).credit(name, Number(n)));
        }, EXISTING);
        process.stdout.write(`${shown(name)}: ${result.balance} credit(s) left\n`);
      }),
    );
}

/** `users disable`, `enable` and `remove`. */
function registerStates(users: Command): void {
  for (const [command, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    users
      .command(command)
      .argument('<name>')
      .description(
        enabled
          ? 'let a disabled account make lookups again'
          : 'refuse every lookup by an account, keeping its settings and usage',
      )
      .action(
        run(async (name: string) => {
          await withStore((s) => managed(admin(s).setEnabled(name, enabled)), EXISTING);
          process.stdout.write(`${command}d ${shown(name)}\n`);
        }),
      );
  }

  users
    .command('remove')
    .argument('<name>')
    .description('remove an account and its usage records')
    .action(
      run(async (name: string) => {
        await withStore((s) => managed(admin(s).remove(name)), EXISTING);
        process.stdout.write(`removed ${shown(name)}\n`);
      }),
    );
}

/**
 * `users list --suspicious`: the accounts whose username was found guessable when the store was
 * migrated to keys (short, or holding a character a new username may not): rotate them
 * (`users rotate NAME`), since a stolen copy of the store gives them away to a dictionary.
 */
function listSuspicious(all: readonly AccountSummary[], json: boolean): void {
  const found = all.filter((a) => a.weak !== null);
  if (json) {
    const rows = found.map((a) => ({ name: a.name, prefix: a.prefix, weak: a.weak, enabled: a.enabled }));
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return;
  }
  if (found.length === 0) {
    process.stdout.write('no account has a username found guessable\n');
    return;
  }
  const rows = found.map((a) => [shown(a.name), escapeInvisible(a.prefix), String(a.weak), String(a.enabled)]);
  process.stdout.write(table(['NAME', 'PREFIX', 'WEAK', 'ENABLED'], rows));
}

/** `users list` and `users usage`: what the accounts hold and what they did; `users fingerprint`: how logs name one. */
function registerReports(users: Command): void {
  users
    .command('fingerprint')
    .argument('<username>')
    .description("the caller's fingerprint, as log lines name it (field caller); reads no store")
    .action(
      run(async (name: string) => {
        if (name === '') throw new InputError('give a username');
        process.stdout.write(`${fingerprint(name)}\n`);
      }),
    );

  users
    .command('list')
    .option('--json', 'one JSON array')
    .option(
      '--suspicious',
      'only accounts whose username is guessable (short, or holding invisible characters): rotate them',
    )
    .description('every account with its settings and the lookups it made today (UTC)')
    .action(
      run(async (opts: { json?: boolean; suspicious?: boolean }) => {
        const list = await withStore((s) => s.accounts.listAccounts(today()), EXISTING);
        if (opts.suspicious) return listSuspicious(list, opts.json === true);
        if (opts.json) {
          process.stdout.write(JSON.stringify(list.map(jsonAccount), null, 2) + '\n');
          return;
        }
        const rate = config().rateLimit;
        const rows = list.map((a) => {
          const d = describe(a, rate);
          return [
            shown(a.name),
            escapeInvisible(a.prefix) + '…',
            d.enabled,
            d.credits,
            String(a.usedToday),
            d['daily limit'],
            d.rate,
            d.allow,
          ];
        });
        process.stdout.write(
          table(['NAME', 'PREFIX', 'ENABLED', 'CREDITS', 'USED TODAY', 'DAILY LIMIT', 'RATE', 'ALLOW'], rows),
        );
      }),
    );

  users
    .command('usage')
    .argument('[name]', "the account's name (or --all)")
    .option('--days <d>', 'days to show, today included', '30')
    .option('--all', 'every caller, over --from .. --to (for an invoice run)')
    .option('--from <day>', 'with --all: the first UTC day, YYYY-MM-DD')
    .option('--to <day>', 'with --all: the last UTC day, YYYY-MM-DD (included)')
    .option('--csv', 'with --all: CSV (name,day,operation,found,not_found)')
    .option('--json', 'one JSON array')
    .description('lookups per UTC day and operation, found and not found')
    .action(run(usageCommand));
}

interface UsageOptions {
  days: string;
  all?: boolean;
  from?: string;
  to?: string;
  csv?: boolean;
  json?: boolean;
}

async function usageCommand(name: string | undefined, opts: UsageOptions): Promise<void> {
  if (opts.all) return usageOfAll(name, opts);
  if (name === undefined) throw new InputError("give an account's name, or --all --from DAY --to DAY for every caller");
  if (opts.from !== undefined || opts.to !== undefined || opts.csv)
    throw new InputError('--from, --to and --csv go with --all; for one account use --days');
  const days = whole(opts.days, '--days', 1, 36_500);
  const from = dayOf(Date.now() - (days - 1) * 86_400_000);
  const rows = await withStore(async (s) => {
    const a = await s.accounts.getAccountByName(name);
    if (!a) noSuch(name);
    return s.accounts.usage(a.username, from);
  }, EXISTING);
  if (opts.json) {
    process.stdout.write(
      JSON.stringify(
        rows.map((r) => ({ day: r.day, operation: r.operation, found: r.found, notFound: r.notFound })),
        null,
        2,
      ) + '\n',
    );
    return;
  }
  const total = rows.reduce((t, r) => [t[0] + r.found, t[1] + r.notFound], [0, 0]);
  process.stdout.write(
    table(
      ['DAY', 'OPERATION', 'FOUND', 'NOT FOUND'],
      [
        ...rows.map((r) => [r.day, r.operation, String(r.found), String(r.notFound)]),
        ['total', '', String(total[0]), String(total[1])],
      ],
    ),
  );
}

/** `users usage --all --from --to [--csv|--json]`: what the admin API's GET /admin/api/usage gives. */
async function usageOfAll(name: string | undefined, opts: UsageOptions): Promise<void> {
  if (name !== undefined) throw new InputError('give a name or --all, not both');
  if (opts.from === undefined || opts.to === undefined)
    throw new InputError('--all needs --from and --to (UTC days, YYYY-MM-DD)');
  if (opts.csv && opts.json) throw new InputError('give --csv or --json, not both');
  const { rows } = await withStore(
    (s) => usageRange(s, opts.from as string, opts.to as string).catch(asInputError),
    EXISTING,
  );
  if (opts.csv) process.stdout.write(usageCsv(rows));
  else if (opts.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  else
    process.stdout.write(
      table(
        ['NAME', 'DAY', 'OPERATION', 'FOUND', 'NOT FOUND'],
        rows.map((r) => [shown(r.name ?? r.username), r.day, r.operation, String(r.found), String(r.notFound)]),
      ),
    );
}

function asInputError(e: unknown): never {
  if (e instanceof Error && 'status' in e)
    throw new InputError(e.message.replace(/^from /, '--from ').replace(/^to /, '--to '));
  throw e;
}
