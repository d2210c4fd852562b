// `reglookup import [--replace|--replace-all] FILE`, `export [FILE]`, `backup FILE`: moving data
// in and out of the store (the use-cases are in data/; this is their command line).

import fs from 'node:fs';
import os from 'node:os';
import type { Command } from 'commander';
import { backupStore, BackupError } from '../data/backup';
import { exportRecords } from '../data/export';
import { importFile, importStream, type ImportReport } from '../data/import';
import { fatal, withStore } from './common';
import { meter, type Meter } from './progress';

interface ImportFlags {
  workers: string;
  replace?: boolean;
  replaceAll?: boolean;
  quiet?: boolean;
}

function summary(report: ImportReport): string {
  const parts = Object.entries(report.byOperation)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, n]) => `${op} ${n}`);
  const lines = [`imported ${report.imported} record(s) from ${report.lines} line(s)${parts.length ? `: ${parts.join(', ')}` : ''}`];
  if (report.deleted > 0) lines.push(`deleted ${report.deleted} record(s) (deletion lines; a key that was not there counts too)`);
  if (report.repeated > 0) lines.push(`${report.repeated} line(s) repeated the key of an earlier line; the later line won`);
  if (report.sampleRemoved > 0) lines.push(`removed the bundled sample data (${report.sampleRemoved} record(s)): this was the first import of real data`);
  if (report.replaced === 'all') lines.push('replaced every operation: the store now holds exactly this file');
  else if (report.replaced) lines.push(`replaced ${report.replaced.length ? report.replaced.join(', ') : 'no operation (the file names none)'}: those now hold exactly this file's records`);
  return lines.join('\n') + '\n';
}

async function runImport(file: string, flags: ImportFlags): Promise<void> {
  if (flags.replace && flags.replaceAll) throw new Error('give --replace or --replace-all, not both');
  const workers = Number(flags.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 64) throw new Error(`--workers must be an integer from 0 to 64, not '${flags.workers}'`);
  // `-`: standard input (`reglookup export | reglookup import --replace-all -`); its size is not known, so no bar.
  const stdin = file === '-';
  const source = stdin ? '(stdin)' : file;
  let size = 0;
  if (!stdin) {
    try {
      size = fs.statSync(file).size;
    } catch (e) {
      throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
  }
  await withStore(async (store) => {
    const bar = meter('import', size, 'bytes', !!flags.quiet);
    let report: ImportReport;
    try {
      const options = { replace: flags.replaceAll ? ('all' as const) : flags.replace ? ('named' as const) : undefined, workers, onBytes: (b: number) => bar.update(b) };
      report = await (stdin ? importStream(store, process.stdin, options) : importFile(store, file, options));
    } finally {
      bar.stop();
    }
    if (!report.committed) {
      for (const e of report.errors) process.stderr.write(`${source}:${e.line}: ${e.reason}\n`);
      if (report.invalid > report.errors.length) process.stderr.write(`... and ${report.invalid - report.errors.length} more invalid lines\n`);
      process.stderr.write(`reglookup: ${report.invalid} invalid line(s) of ${report.lines}; nothing was imported\n`);
      process.exitCode = 1;
      return;
    }
    if (!flags.quiet) process.stdout.write(summary(report));
  });
}

async function runExport(file: string | undefined, flags: { quiet?: boolean }): Promise<void> {
  await withStore(async (store) => {
    const out = file ? fs.createWriteStream(file) : process.stdout;
    if (file) out.on('error', fatal);
    // `reglookup export | head`: the reader leaving is not a failure.
    if (!file) process.stdout.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' ? process.exit(0) : fatal(e)));
    const total = flags.quiet ? 0 : await store.count();
    const bar = meter('export', total, 'records', !!flags.quiet);
    let n: number;
    try {
      n = await exportRecords(store, out, (done) => bar.update(done));
    } finally {
      bar.stop();
    }
    if (file) await new Promise<void>((resolve, reject) => (out as fs.WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())));
    if (!flags.quiet) process.stderr.write(`exported ${n} record(s)${file ? ` to ${file}` : ''}\n`);
  }, { mustExist: true });
}

async function runBackup(file: string, flags: { quiet?: boolean }): Promise<void> {
  await withStore(async (store) => {
    const bars: Meter[] = [];
    try {
      await backupStore(store, file, (done, total) => {
        if (bars.length === 0) bars.push(meter('backup', total, 'pages', !!flags.quiet));
        bars[0].update(done);
      });
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
    if (!flags.quiet) process.stderr.write(`backed up to ${file} (${(fs.statSync(file).size / 1024 / 1024).toFixed(1)} MB)\n`);
  }, { mustExist: true });
}

export function registerData(program: Command): void {
  program
    .command('import')
    .argument('<file>', 'NDJSON file, one record (or deletion) per line; - for standard input')
    .option('--replace', "replace every operation the file names: each then holds exactly the file's records")
    .option('--replace-all', 'replace the whole store with the file')
    .option('--workers <n>', 'threads that parse and check lines beside the one writing, 0 to 64 (0: all on one thread; the default is one fewer than the cores, at least 1 and at most 4)', String(Math.max(1, Math.min(os.availableParallelism() - 1, 4))))
    .option('-q, --quiet', 'no progress and no summary (errors are still printed)')
    .description('import vehicles and MOT histories; all or nothing, in one transaction')
    .action((file: string, flags: ImportFlags) => runImport(file, flags).catch(fatal));
  program
    .command('export')
    .argument('[file]', 'where to write the NDJSON (stdout when absent)')
    .option('-q, --quiet', 'no progress and no summary')
    .description('write every record as NDJSON in the import format, in key order')
    .action((file: string | undefined, flags: { quiet?: boolean }) => runExport(file, flags).catch(fatal));
  program
    .command('backup')
    .argument('<file>', 'new file to write the copy to')
    .option('-q, --quiet', 'no progress and no summary')
    .description('a consistent copy of the whole store (records, accounts, usage), safe while the server serves')
    .action((file: string, flags: { quiet?: boolean }) => runBackup(file, flags).catch(fatal));
}
