// A worker thread of an import: parses and prepares runs of lines (parse.ts) and posts back their
// outcomes, in the order received. The answers' maker is loaded from the module PreparedForms.source
// names (a function cannot be sent to a thread).

import { parentPort, workerData } from 'node:worker_threads';
import type { PreparedForms } from '../store/store';
import { parseChunk } from './parse';

interface Data {
  readonly source: { readonly module: string; readonly name: string } | null;
  readonly version: string | null;
}

const data = workerData as Data;
let make: PreparedForms['make'] | undefined;
if (data.source) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const forms = (require(data.source.module) as Record<string, PreparedForms>)[data.source.name];
  if (!forms || forms.version !== data.version) throw new Error(`import worker: ${data.source.module} does not export forms of version ${data.version}`);
  make = forms.make;
}

parentPort?.on('message', (lines: string[]) => {
  parentPort?.postMessage(parseChunk(lines, make));
});
