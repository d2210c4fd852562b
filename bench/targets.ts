// The servers a benchmark round drives, each in its own process: the baselines replay the service's
// own answers (bare node:http, and a bare Express app with one middleware), chosen by the
// x-bench-scenario header the load generator sends.
//   node -r ts-node/register/transpile-only bench/targets.ts node|express ANSWERS.json
// prints "listening PORT" when ready.

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const [kind, file] = process.argv.slice(2);
const answers = new Map<string, { status: number; headers: Record<string, string | number>; body: Buffer }>(
  Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Answer>).map(([name, a]) => {
    const body = Buffer.from(a.body, 'utf8');
    return [
      name,
      { status: a.status, headers: { 'Content-Type': a.contentType, 'Content-Length': body.length }, body },
    ];
  }),
);

function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const a = answers.get(String(req.headers['x-bench-scenario']));
  if (!a) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(a.status, a.headers);
  res.end(a.body);
}

let server: http.Server;
if (kind === 'node') {
  server = http.createServer(answer);
} else if (kind === 'express') {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use((req, res) => answer(req, res));
  server = http.createServer(app);
} else {
  throw new Error(`unknown target ${kind}`);
}
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
