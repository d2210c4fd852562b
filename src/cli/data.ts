// `reglookup import FILE`: moving data into the store.

import type { Command } from 'commander';
import { importFile } from '../store/import';
import { PREPARED_FORMS } from '../transport/prepared';
import { fatal, withStore } from './common';

async function runImport(file: string): Promise<void> {
  await withStore(async (store) => {
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
  });
}

export function registerData(program: Command): void {
  program
    .command('import')
    .argument('<file>', 'NDJSON file, one record per line')
    .description('import vehicles and MOT histories; all or nothing')
    .action((file: string) => runImport(file).catch(fatal));
}
