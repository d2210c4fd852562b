// Downloads one file of a register's export for deploy/refresh.sh, with node alone (no curl in the
// container image): `node download.mjs URL FILE`. When FILE is there already, the server is asked
// only for a newer copy (If-Modified-Since, from FILE's time): a register's past years never change,
// so a daily run fetches only what did. The new copy is written beside FILE and renamed over it when
// whole, with the server's Last-Modified as its time. Prints `downloaded N bytes` or `unchanged`;
// exits 1 with one line on a failure, after three tries.
import fs from 'node:fs';

const [url, file] = process.argv.slice(2);
if (!url || !file) {
  process.stderr.write('usage: node download.mjs URL FILE\n');
  process.exit(2);
}
const TRIES = 3;
const TIMEOUT_MS = Number(process.env.REFRESH_DOWNLOAD_TIMEOUT_S ?? 7200) * 1000;

async function once() {
  const headers = {};
  if (fs.existsSync(file)) headers['if-modified-since'] = fs.statSync(file).mtime.toUTCString();
  const res = await fetch(url, { headers, redirect: 'follow', signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (res.status === 304) return 'unchanged';
  if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
  const part = `${file}.part`;
  const out = fs.createWriteStream(part);
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
    }
    await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
  } catch (e) {
    out.destroy();
    fs.rmSync(part, { force: true });
    throw e;
  }
  const expected = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(expected) && expected !== bytes) {
    fs.rmSync(part, { force: true });
    throw new Error(`cut short: ${bytes} of ${expected} bytes`);
  }
  const modified = Date.parse(res.headers.get('last-modified') ?? '');
  if (Number.isFinite(modified)) fs.utimesSync(part, new Date(modified), new Date(modified));
  fs.renameSync(part, file);
  return `downloaded ${bytes} bytes`;
}

for (let attempt = 1; ; attempt++) {
  try {
    process.stdout.write(`${await once()}\n`);
    break;
  } catch (e) {
    if (attempt >= TRIES) {
      process.stderr.write(`cannot download ${url}: ${e.cause?.message ?? e.message}\n`);
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, Number(process.env.REFRESH_RETRY_S ?? 30) * 1000));
  }
}
