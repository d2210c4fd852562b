// A redis-server of a test's own, on a spare port (the machine's Redis on 6379 is left alone): no
// persistence, resolved once it says it is ready to accept connections.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export async function startRedisServer(port: number): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  return child;
}
