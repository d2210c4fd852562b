// `reglookup lookup --file plates.csv [--out results.csv] [--url URL]`, as REGLOOKUP_USERNAME: a batch job
// (docs/calling.md, "Batch jobs") submitted to a running service, followed with a progress bar, and
// its results written as CSV. It calls the service rather than running the job in this process: the
// rate limit, the upstreams' quotas and the job's lease are the service's, kept where every other
// caller meets them, and a job outlives this command (its id is printed, to fetch it again).

import fs from 'node:fs';
import type { Command } from 'commander';
import { lookupUsername } from '../config';
import { config, fatal } from './common';
import { meter } from './progress';

interface LookupFlags {
  file: string;
  out?: string;
  username?: string;
  url?: string;
  operation?: string;
  quiet?: boolean;
}

interface Progress {
  id: string;
  status: string;
  rows: number;
  done: number;
  found: number;
  notFound: number;
  refused: number;
  note: string | null;
}

function auth(username: string): string {
  return `Basic ${Buffer.from(`${username}:`, 'utf8').toString('base64')}`;
}

async function answer(res: Response): Promise<Progress> {
  if (res.status === 200 || res.status === 202) return (await res.json()) as Progress;
  const body = await res.text();
  let message = body.slice(0, 300);
  try {
    const e = JSON.parse(body) as { code?: string; message?: string };
    message = `${e.code}: ${e.message}`;
  } catch {
    // Not the service's JSON error: the text as it came.
  }
  throw new Error(`the service answered ${res.status}: ${message}`);
}

async function run(flags: LookupFlags): Promise<void> {
  const base = (flags.url ?? `http://127.0.0.1:${config().port}`).replace(/\/+$/, '');
  const body = fs.readFileSync(flags.file);
  const type = /\.json$/i.test(flags.file) ? 'application/json' : 'text/csv';
  const query = flags.operation ? `?operation=${encodeURIComponent(flags.operation)}` : '';
  const username = flags.username ?? lookupUsername();
  if (username === undefined)
    throw new Error(
      'give the caller to look up as: REGLOOKUP_USERNAME in the environment (kept out of ps), or --username',
    );
  const headers = { Authorization: auth(username) };
  const job = await answer(
    await fetch(`${base}/api/batch${query}`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': `${type}; charset=utf-8` },
      body,
    }),
  );
  process.stderr.write(`job ${job.id}: ${job.rows} rows\n`);
  const bar = meter('lookup', job.rows, 'records', flags.quiet === true);
  let p = job;
  let said: string | null = null;
  while (p.status === 'running') {
    await new Promise((r) => setTimeout(r, 1000));
    p = await answer(await fetch(`${base}/api/batch/${job.id}`, { headers }));
    bar.update(p.done);
    if (p.note !== null && p.note !== said && !flags.quiet) process.stderr.write(`\n${p.note}\n`);
    said = p.note;
  }
  bar.stop();
  const res = await fetch(`${base}/api/batch/${job.id}?format=csv`, { headers });
  if (res.status !== 200 || res.body === null) await answer(res);
  const out: NodeJS.WritableStream = flags.out ? fs.createWriteStream(flags.out) : process.stdout;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  if (flags.out) await new Promise<void>((r) => out.end(() => r()));
  process.stderr.write(
    `${p.status}: ${p.found} found, ${p.notFound} not found, ${p.refused} refused of ${p.rows}${p.note ? ` (${p.note})` : ''}\n`,
  );
  if (p.status !== 'done') process.exitCode = 1;
}

export function registerLookup(program: Command): void {
  program
    .command('lookup')
    .description('look up every row of a CSV (operation,registration,state) or JSON file as one batch job')
    .requiredOption('--file <file>', 'the rows: CSV with a header row, or a .json file')
    .option('--out <file>', 'write the results CSV here (default: standard output)')
    .option(
      '--username <name>',
      'the caller the lookups are made and charged as (default: REGLOOKUP_USERNAME; an argument shows in ps)',
    )
    .option('--url <url>', 'the running service (default: http://127.0.0.1:$PORT)')
    .option('--operation <op>', 'the operation of rows that name none (a CSV without an operation column)')
    .option('--quiet', 'no progress')
    .action((flags: LookupFlags) =>
      run(flags).catch((e: unknown) => {
        // fetch's own message is "fetch failed": say which service could not be reached.
        if (e instanceof TypeError && e.message === 'fetch failed')
          fatal(new Error(`cannot reach the service at ${flags.url ?? 'http://127.0.0.1:$PORT'}: is it running?`));
        fatal(e);
      }),
    );
}
