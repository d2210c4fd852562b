// `reglookup import [--replace|--replace-all] FILE`, `export [FILE]`, `backup FILE`: moving data
// in and out of the store (the use-cases are in data/; this is their command line).

import { messageOf } from '../core/errors';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { backupStore, BackupError, existsMessage } from '../data/backup';
import { exportRecords } from '../data/export';
import {
  importFile,
  importFiles,
  ImportInputError,
  importStream,
  readFuelFile,
  type ImportFormat,
  type ImportReport,
} from '../data/import';
import type { FuelMap } from '../data/rdw';
import { redactUrl, sqliteFileOf } from '../store/open';
import type { VehicleStore } from '../store/store';
import { config, fatal, withStore } from './common';
import { meter, type Meter } from './progress';

interface ImportFlags {
  workers: string;
  replace?: boolean;
  replaceAll?: boolean;
  quiet?: boolean;
  dryRun?: boolean;
  minKeep: string;
  allowShrink?: boolean;
  format: string;
  fuel?: string;
}

/** The share of today's records a --replace-all must keep unless told otherwise (docs/data.md, "Full refresh"). */
const DEFAULT_MIN_KEEP = 50;

function byOperation(report: ImportReport): string {
  const parts = Object.entries(report.byOperation)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, n]) => `${op} ${n}`);
  return parts.length ? `: ${parts.join(', ')}` : '';
}

function summary(report: ImportReport): string {
  const lines = [`imported ${report.imported} record(s) from ${report.lines} line(s)${byOperation(report)}`];
  if (report.deleted > 0)
    lines.push(`deleted ${report.deleted} record(s) (deletion lines; a key that was not there counts too)`);
  lines.push(...registerLines(report, 'was'));
  if (report.repeated > 0 && !isRegister(report))
    lines.push(`${report.repeated} line(s) repeated the key of an earlier line; the later line won`);
  if (report.sampleRemoved > 0)
    lines.push(
      `removed the bundled sample data (${report.sampleRemoved} record(s)): this was the first import of real data`,
    );
  if (report.replaced === 'all') lines.push('replaced every operation: the store now holds exactly this file');
  else if (report.replaced)
    lines.push(
      `replaced ${report.replaced.length ? report.replaced.join(', ') : 'no operation (the file names none)'}: those now hold exactly this file's records`,
    );
  return lines.join('\n') + '\n';
}

/** Whether the report is of a register whose rows are operations (--format ua-mvs): rows skipped or superseded. */
function isRegister(report: ImportReport): boolean {
  return report.skipped !== undefined;
}

/** What an import of Ukraine's register left out, and why (`verb`: 'was' for an import, 'would be' for a dry run). */
function registerLines(report: ImportReport, verb: string): string[] {
  const lines: string[] = [];
  if (report.skipped) lines.push(`${report.skipped} row(s) have no plate (N_REG_NEW): skipped`);
  for (const file of report.withoutPlates ?? [])
    lines.push(`${file} has no N_REG_NEW column: none of its rows has a plate, so none of them ${verb} imported`);
  const older = (report.superseded ?? 0) + report.repeated;
  if (older > 0 && isRegister(report))
    lines.push(`${older} row(s) are earlier operations of a plate read in another row: each plate holds its newest`);
  return lines;
}

function dryRunSummary(report: ImportReport): string {
  const d = report.dryRun;
  if (!d) return '';
  const lines = [
    `dry run: nothing was written`,
    `would import ${report.imported} record(s) from ${report.lines} line(s)${byOperation(report)}`,
  ];
  lines.push(
    `would add ${d.added} new record(s) and replace ${d.replaced} the store holds (${d.changed} changed, ${d.unchanged} unchanged)`,
  );
  lines.push(
    `would remove ${d.removed} record(s)${report.sampleRemoved > 0 ? ' (the bundled sample data, all of it)' : report.replaced === 'all' ? ' (every record the file does not hold)' : report.replaced ? " (the replaced operations' records the file does not hold, and deletion lines)" : ' (deletion lines)'}`,
  );
  for (const [op, c] of Object.entries(d.operations))
    lines.push(`  ${op}: ${c.added} added, ${c.changed} changed, ${c.unchanged} unchanged, ${c.removed} removed`);
  lines.push(...registerLines(report, 'would be'));
  if (report.repeated > 0 && !isRegister(report))
    lines.push(`${report.repeated} line(s) repeat the key of an earlier line; the later line would win`);
  if (report.sampleRemoved > 0)
    lines.push(
      `the bundled sample data (${report.sampleRemoved} record(s)) would be removed: this would be the first import of real data`,
    );
  lines.push(`the store holds ${d.before} record(s) now`);
  return lines.join('\n') + '\n';
}

function shrinkMessage(report: ImportReport): string {
  const r = report.shrinkRefused;
  if (!r) return '';
  const what = r.operation
    ? `--replace would leave ${r.after} ${r.operation} record(s) where the store holds ${r.before} now`
    : `--replace-all would leave ${r.after} record(s) where the store holds ${r.before} now`;
  return `refused: ${what} (less than --min-keep ${r.minKeep} %); nothing was imported. Give --allow-shrink (or --min-keep 0) if that is what you mean`;
}

function minKeepOf(flags: ImportFlags): number {
  if (flags.allowShrink) return 0;
  if (!/^\d+$/.test(flags.minKeep) || Number(flags.minKeep) > 100)
    throw new Error(`--min-keep must be a whole per cent from 0 to 100, not '${flags.minKeep}'`);
  return Number(flags.minKeep);
}

/** A full disk, from SQLite (SQLITE_FULL), the file system (ENOSPC) or PostgreSQL (SQLSTATE 53100). */
function isDiskFull(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100';
}

function diskFull(databaseUrl: string): Error {
  const file = sqliteFileOf(databaseUrl);
  const where = file ? path.resolve(file) : `the PostgreSQL database (${redactUrl(databaseUrl)})`;
  return new Error(`import failed: the disk holding ${where} is full; nothing was imported`);
}

/** The file to import, checked before the store is opened; its size (0 for standard input). */
function inputSize(file: string): number {
  if (file === '-') return 0;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (e) {
    throw new Error(
      `cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
      { cause: e },
    );
  }
  if (stat.isDirectory())
    throw new Error(`cannot read ${file}: it is a directory; give an NDJSON file (plain or gzip-compressed)`);
  return stat.size;
}

async function runImport(files: string[], flags: ImportFlags): Promise<void> {
  if (flags.replace && flags.replaceAll) throw new Error('give --replace or --replace-all, not both');
  const workers = Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 64)
    throw new Error(`--workers must be an integer from 0 to 64, not '${flags.workers}'`);
  const minKeep = minKeepOf(flags);
  const format = formatOf(flags);
  if (files.length > 1 && (format !== 'ua-mvs' || files.includes('-')))
    throw new Error(`give one file (several only with --format ua-mvs, and not -), not ${files.length}`);
  const file = files[0];
  // `-`: standard input (`reglookup export | reglookup import --replace-all -`); its size is not known, so no bar.
  const stdin = file === '-';
  const source = stdin ? '(stdin)' : files.join(', ');
  const databaseUrl = config().databaseUrl;
  // Ctrl-C: the import stops before it commits and everything it wrote is rolled back.
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.once('SIGINT', onSigint);
  try {
    const size = files.reduce((sum, f) => sum + inputSize(f), 0);
    const fuel = flags.fuel ? await readFuelFlag(flags.fuel, !!flags.quiet, interrupt.signal) : undefined;
    await withStore(
      async (store) => {
        const bar = meter(flags.dryRun ? 'import (dry run)' : 'import', size, 'bytes', !!flags.quiet);
        let report: ImportReport;
        try {
          const options = {
            replace: flags.replaceAll ? ('all' as const) : flags.replace ? ('named' as const) : undefined,
            workers,
            minKeep,
            dryRun: !!flags.dryRun,
            signal: interrupt.signal,
            onBytes: (b: number) => bar.update(b),
            format,
            fuel,
          };
          report = await (stdin
            ? importStream(store, process.stdin, options)
            : files.length > 1
              ? importFiles(store, files, options)
              : importFile(store, file, options));
        } finally {
          bar.stop();
        }
        if (!flags.dryRun) await noteImport(store, report.committed);
        reportImport(report, source, flags);
      },
      { absentAsEmpty: !!flags.dryRun },
    );
  } catch (e) {
    if (!flags.dryRun) await noteFailedImport();
    if (interrupt.signal.aborted) {
      process.stderr.write('reglookup: interrupted (SIGINT); nothing was imported\n');
      process.exit(130);
    }
    if (isDiskFull(e)) throw diskFull(databaseUrl);
    if (e instanceof ImportInputError)
      throw new Error(`cannot read ${e.file ?? source}: ${e.message}; nothing was imported`, { cause: e });
    throw e;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/**
 * Keeps how this import ended in the store, where every instance serving from it reports it
 * (reglookup_last_import_success, for an alert). Not being able to is said, not fatal: the import's own result stands.
 */
async function noteImport(store: VehicleStore, committed: boolean): Promise<void> {
  await store.noteImport({ at: Date.now(), committed }).catch((e: unknown) => {
    process.stderr.write(
      `reglookup: could not note the import's result in the store (reglookup_last_import_success): ${messageOf(e)}\n`,
    );
  });
}

/** An import that stopped with an error: noted on a connection of its own, when the store can still be reached. */
async function noteFailedImport(): Promise<void> {
  await withStore((store) => store.noteImport({ at: Date.now(), committed: false }), { mustExist: true }).catch(
    () => undefined,
  );
}

function formatOf(flags: ImportFlags): ImportFormat {
  if (flags.format !== 'ndjson' && flags.format !== 'rdw' && flags.format !== 'ua-mvs')
    throw new Error(`--format must be ndjson, rdw or ua-mvs, not '${flags.format}'`);
  if (flags.fuel !== undefined && flags.format !== 'rdw')
    throw new Error('--fuel joins RDW fuel data to --format rdw; give --format rdw too');
  return flags.format;
}

/** --fuel FILE read whole, with its own progress, before the import begins. */
async function readFuelFlag(file: string, quiet: boolean, signal: AbortSignal): Promise<FuelMap> {
  const bar = meter('fuel', inputSize(file), 'bytes', quiet);
  try {
    return await readFuelFile(file, (b) => bar.update(b), signal);
  } catch (e) {
    if (e instanceof ImportInputError)
      throw new Error(`cannot read ${file} (--fuel): ${e.message}; nothing was imported`, { cause: e });
    throw e;
  } finally {
    bar.stop();
  }
}

function reportImport(report: ImportReport, source: string, flags: ImportFlags): void {
  if (report.invalid > 0) {
    for (const e of report.errors) process.stderr.write(`${e.file ?? source}:${e.line}: ${e.reason}\n`);
    if (report.invalid > report.errors.length)
      process.stderr.write(`... and ${report.invalid - report.errors.length} more invalid lines\n`);
    process.stderr.write(
      `reglookup: ${report.invalid} invalid line(s) of ${report.lines}; ${flags.dryRun ? 'the import would fail (dry run: nothing was written)' : 'nothing was imported'}\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (report.dryRun) {
    process.stdout.write(dryRunSummary(report));
    if (report.shrinkRefused) {
      process.stderr.write(`reglookup: the import would be ${shrinkMessage(report)}\n`);
      process.exitCode = 1;
    }
    return;
  }
  if (report.shrinkRefused) {
    process.stderr.write(`reglookup: ${shrinkMessage(report)}\n`);
    process.exitCode = 1;
    return;
  }
  if (!flags.quiet) process.stdout.write(summary(report));
}

async function runExport(
  given: string | undefined,
  flags: { quiet?: boolean; force?: boolean; withCache?: boolean },
): Promise<void> {
  // `-` is standard output, as it is standard input for import (it once wrote a file named "-").
  const file = given === '-' ? undefined : given;
  // As backup does: an existing file is not overwritten without --force.
  if (file && !flags.force && fs.existsSync(file)) throw new Error(existsMessage(file));
  await withStore(
    async (store) => {
      const out = file ? fs.createWriteStream(file) : process.stdout;
      if (file) out.on('error', fatal);
      // `reglookup export | head`: the reader leaving is not a failure.
      if (!file)
        process.stdout.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' ? process.exit(0) : fatal(e)));
      const total = flags.quiet ? 0 : await store.count();
      const bar = meter('export', total, 'records', !!flags.quiet);
      let n: number;
      try {
        n = await exportRecords(store, out, (done) => bar.update(done), { withCache: !!flags.withCache });
      } finally {
        bar.stop();
      }
      if (file)
        await new Promise<void>((resolve, reject) =>
          (out as fs.WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())),
        );
      if (!flags.quiet) process.stderr.write(`exported ${n} record(s)${file ? ` to ${file}` : ''}\n`);
    },
    { mustExist: true },
  );
}

async function runBackup(
  file: string,
  flags: { quiet?: boolean; force?: boolean; withCache?: boolean },
): Promise<void> {
  await withStore(
    async (store) => {
      const bars: Meter[] = [];
      let files: readonly string[];
      try {
        files = await backupStore(
          store,
          file,
          (done, total) => {
            if (bars.length === 0) bars.push(meter('backup', total, 'pages', !!flags.quiet));
            bars[0].update(done);
          },
          { force: !!flags.force, withCache: !!flags.withCache },
        );
      } catch (e) {
        if (e instanceof BackupError) {
          process.stderr.write(`reglookup: ${e.message}\n`);
          process.exitCode = 1;
          return;
        }
        throw e;
      } finally {
        bars[0]?.stop();
      }
      if (!flags.quiet)
        process.stderr.write(
          `backed up to ${files.map((f) => `${f} (${(fs.statSync(f).size / 1024 / 1024).toFixed(1)} MB)`).join(' and ')}\n`,
        );
    },
    { mustExist: true },
  );
}

export function registerData(program: Command): void {
  program
    .command('import')
    .argument(
      '<file...>',
      'NDJSON file, one record (or deletion) per line, plain or gzip-compressed; - for standard input (several files: --format ua-mvs)',
    )
    .option('--replace', "replace every operation the file names: each then holds exactly the file's records")
    .option('--replace-all', 'replace the whole store with the file')
    .option(
      '--min-keep <percent>',
      `with --replace-all (or --replace, per operation): refuse (writing nothing) a file holding fewer records than this share of what the store holds now, or none at all`,
      String(DEFAULT_MIN_KEEP),
    )
    .option(
      '--allow-shrink',
      'with --replace-all or --replace: replace whatever the file holds (the same as --min-keep 0)',
    )
    .option('--dry-run', 'read and check the whole file and say what it would change, writing nothing')
    .option(
      '--workers <n>',
      'threads that parse and check lines beside the one writing, 0 to 64 (0: all on one thread; the default is one fewer than the cores, at least 1 and at most 4)',
      String(Math.max(1, Math.min(os.availableParallelism() - 1, 4))),
    )
    .option('-q, --quiet', 'no progress and no summary (errors are still printed)')
    .option(
      '--format <format>',
      "ndjson; rdw: RDW's CSV of registered vehicles (m9d7-ebf2), CheckNetherlands records; ua-mvs: the Ukrainian Ministry of Internal Affairs' register (yearly ZIP or CSV files, several at once), CheckUkraine records",
      'ndjson',
    )
    .option('--fuel <file>', "with --format rdw: RDW's CSV of fuel data (8ys7-d773), joined by kenteken")
    .description('import vehicles and MOT histories; all or nothing, in one transaction')
    .action((files: string[], flags: ImportFlags) => runImport(files, flags).catch(fatal));
  program
    .command('export')
    .argument('[file]', 'where to write the NDJSON (stdout when absent or -); refused if it exists, unless --force')
    .option('--force', 'overwrite the file if it exists')
    .option(
      '--with-cache',
      'also write the answers fetched from upstream providers that the cache holds (as record lines, after the records)',
    )
    .option('-q, --quiet', 'no progress and no summary')
    .description('write every record as NDJSON in the import format, in key order')
    .action((file: string | undefined, flags: { quiet?: boolean; force?: boolean; withCache?: boolean }) =>
      runExport(file, flags).catch(fatal),
    );
  program
    .command('backup')
    .argument('<file>', 'new file to write the copy to; refused if it exists, unless --force')
    .option('--force', 'replace the file if it exists (once the copy is whole)')
    .option('--with-cache', 'keep the answers fetched from upstream providers in the copy (left out by default)')
    .option('-q, --quiet', 'no progress and no summary')
    .description(
      'a consistent copy of the whole store (records, accounts, usage), safe while the server serves; SQLite: FILE and its accounts file beside it',
    )
    .action((file: string, flags: { quiet?: boolean; force?: boolean; withCache?: boolean }) =>
      runBackup(file, flags).catch(fatal),
    );
}
