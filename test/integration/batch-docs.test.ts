// The batch round trip of docs/calling.md ("Batch jobs"), run as written with bash and curl against
// a server on the sample data: what its comment shows is what comes back.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server';

jest.setTimeout(60_000);

const page = fs.readFileSync(path.resolve(__dirname, '../../docs/calling.md'), 'utf8');
const block = /^```sh\n(printf 'operation,registration[\s\S]*?)^```/m.exec(page)?.[1] ?? '';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

test('the curl round trip of a batch job answers what its comment shows', async () => {
  expect(block).toContain('/api/batch');
  const shown = block
    .split('\n')
    .filter((l) => l.startsWith('#   '))
    .map((l) => l.slice(4));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-batch-docs-'));
  try {
    const script = block.replaceAll('http://localhost:8080', server.url);
    const { stdout } = await promisify(execFile)('bash', ['-e', '-c', script], { cwd: dir, timeout: 30_000 });
    expect(stdout.trim().split('\n')).toEqual(shown);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
