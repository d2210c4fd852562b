// Batch jobs over HTTP (docs/calling.md, "Batch jobs"), on both stores: a job's results come back one
// row per input row in input order, only found rows are charged, only the caller that made a job can
// read it, limits pace a job rather than fail its rows, a job survives a restart, and results expire.

import { createHash } from 'node:crypto';
import { describeStores, type StoreKind } from '../helpers/stores';
import { startServer, type TestServer } from '../helpers/server';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

jest.setTimeout(120_000);

/** RFC 4180 rows (the service's CSV is read here without its own code). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field.replace(/\r$/, ''));
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

function basic(username: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`${username}:x`).toString('base64')}` };
}

async function submit(server: TestServer, username: string, body: string, type = 'text/csv'): Promise<Response> {
  return fetch(`${server.url}/api/batch`, {
    method: 'POST',
    headers: { ...basic(username), 'Content-Type': type },
    body,
  });
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

async function poll(server: TestServer, id: string, username: string, until: (p: Progress) => boolean) {
  const deadline = Date.now() + 100_000;
  for (;;) {
    const res = await fetch(`${server.url}/api/batch/${id}`, { headers: basic(username) });
    const p = (await res.json()) as Progress;
    if (until(p)) return p;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck at ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function csvResults(server: TestServer, id: string, username: string): Promise<string[][]> {
  const res = await fetch(`${server.url}/api/batch/${id}?format=csv`, { headers: basic(username) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  return parseCsv(await res.text());
}

async function credits(server: TestServer, username: string): Promise<number> {
  const res = await fetch(`${server.url}/ajax/getcredits.aspx?username=${username}`);
  return Number(await res.text());
}

// From data/sample.ndjson: Check RG11 ABC is a FORD; CheckUSA 7ABC123 in CA; ZZ99 ZZZ is held by no record.
const FOUND = ['Check', 'RG11 ABC', ''];
const UNKNOWN = ['Check', 'ZZ99 ZZZ', ''];

describeStores('batch jobs (%s)', (kind: StoreKind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: kind.url() });
  });
  afterAll(() => server.close());

  test('a 10,000-row CSV job answers every row in input order, charges exactly the found rows, and only its caller reads it', async () => {
    await server.store.accounts.addAccount({ username: key('fleet'), credits: 5000 });
    const rows: string[][] = [];
    const expected: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const [row, code] =
        i % 4 === 0 || i % 4 === 3
          ? [FOUND, '']
          : i % 4 === 1
            ? [UNKNOWN, 'VEHICLE_NOT_FOUND']
            : i % 8 === 2
              ? [['Check', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ1234567', ''], 'INVALID_PARAMETER']
              : [['CheckMars', 'RG11 ABC', ''], 'UNKNOWN_OPERATION'];
      rows.push(row);
      expected.push(code);
    }
    const body = 'operation,registration,state\n' + rows.map((r) => r.join(',')).join('\n') + '\n';
    const before = await credits(server, 'fleet');
    expect(before).toBe(5000);

    const res = await submit(server, 'fleet', body);
    expect(res.status).toBe(202);
    const job = (await res.json()) as Progress;
    expect(job).toMatchObject({ rows: 10_000 });
    expect(res.headers.get('location')).toBe(`/api/batch/${job.id}`);
    expect(job.id).toMatch(/^[A-Za-z0-9_-]{24}$/);

    // Another username, or none, cannot read it: the same 404 as an id that does not exist.
    const other = await fetch(`${server.url}/api/batch/${job.id}`, { headers: basic('someone-else') });
    expect(other.status).toBe(404);
    const none = await fetch(`${server.url}/api/batch/AAAAAAAAAAAAAAAAAAAAAAAA`, { headers: basic('fleet') });
    expect(none.status).toBe(404);
    expect(await other.json()).toEqual(await none.json());

    const done = await poll(server, job.id, 'fleet', (p) => p.status !== 'running');
    expect(done).toMatchObject({ status: 'done', done: 10_000, found: 5000, notFound: 2500, refused: 2500 });

    const table = await csvResults(server, job.id, 'fleet');
    const header = table[0];
    expect(header.slice(0, 6)).toEqual(['row', 'operation', 'registration', 'state', 'code', 'message']);
    expect(table).toHaveLength(10_001);
    const make = header.indexOf('CarMake.CurrentTextValue');
    expect(make).toBeGreaterThan(5);
    table.slice(1).forEach((r, i) => {
      expect([r[0], r[1], r[2], r[4]]).toEqual([String(i + 1), rows[i][0], rows[i][1], expected[i]]);
      if (expected[i] === '') expect(r[make]).toBe('FORD');
    });
    expect(await credits(server, 'fleet')).toBe(before - 5000);
  });

  test('JSON in, JSON out: the answer fields flattened, a state where the operation takes one', async () => {
    const res = await submit(
      server,
      'json-user',
      JSON.stringify([
        { operation: 'CheckUSA', registration: '7ABC123', state: 'CA' },
        { operation: 'Check', registration: 'RG11 ABC' },
        { operation: 'CheckUSA', registration: '7ABC123', state: 'ZZ' },
      ]),
      'application/json',
    );
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as Progress;
    await poll(server, id, 'json-user', (p) => p.status !== 'running');
    const out = await fetch(`${server.url}/api/batch/${id}`, {
      headers: { ...basic('json-user'), Accept: 'application/json' },
    });
    expect(out.status).toBe(200);
    const text = await out.text();
    // One key each (RFC 8259: names SHOULD be unique; parsers differ on which of two they keep).
    expect(text.match(/"results":/g)).toHaveLength(1);
    const body = JSON.parse(text) as { status: string; results: Record<string, string | number>[] };
    expect(body.status).toBe('done');
    expect(body.results.map((r) => [r.row, r.code ?? ''])).toEqual([
      [1, ''],
      [2, ''],
      [3, 'INVALID_PARAMETER'],
    ]);
    expect(body.results[1]['CarMake.CurrentTextValue']).toBe('FORD');
    expect(typeof body.results[0].Description).toBe('string');
  });

  test('bad input: too many rows, a bad header, an unknown media type are refused; an empty one too', async () => {
    const small = await startServer({ DATABASE_URL: kind.url(), BATCH_MAX_ROWS: '3' });
    try {
      const four = 'operation,registration\n' + 'Check,RG11 ABC\n'.repeat(4);
      const tooMany = await submit(small, 'u', four);
      expect(tooMany.status).toBe(413);
      expect(((await tooMany.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
      const header = await submit(small, 'u', 'op,plate\nCheck,RG11 ABC\n');
      expect(header.status).toBe(400);
      expect(((await header.json()) as { code: string }).code).toBe('MALFORMED_REQUEST');
      const media = await submit(small, 'u', '<rows/>', 'application/xml');
      expect(media.status).toBe(415);
      const empty = await submit(small, 'u', 'operation,registration\n');
      expect(empty.status).toBe(400);
      const noUser = await fetch(`${small.url}/api/batch`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/csv' },
        body: 'operation,registration\nCheck,RG11 ABC\n',
      });
      expect(noUser.status).toBe(400);
      expect(((await noUser.json()) as { code: string }).code).toBe('MISSING_PARAMETER');
    } finally {
      await small.close();
    }
  });

  test('OUT_OF_CREDIT stops the job and says so; the rows not looked up say why', async () => {
    await server.store.accounts.addAccount({ username: key('short'), credits: 3 });
    const res = await submit(server, 'short', 'operation,registration\n' + 'Check,RG11 ABC\n'.repeat(10));
    const { id } = (await res.json()) as Progress;
    const p = await poll(server, id, 'short', (q) => q.status !== 'running');
    expect(p.status).toBe('stopped');
    expect(p.found).toBe(3);
    expect(p.note).toMatch(/out of credit/);
    const table = await csvResults(server, id, 'short');
    expect(table).toHaveLength(11);
    expect(table.slice(1).filter((r) => r[4] === 'OUT_OF_CREDIT')).toHaveLength(7);
    expect(await credits(server, 'short')).toBe(0);
  });

  test('the daily limit pauses the job until midnight UTC and says so; no row fails for it', async () => {
    await server.store.accounts.addAccount({ username: key('daily'), dailyLimit: 4 });
    const res = await submit(server, 'daily', 'operation,registration\n' + 'Check,RG11 ABC\n'.repeat(10));
    const { id } = (await res.json()) as Progress;
    const p = await poll(server, id, 'daily', (q) => q.note !== null);
    expect(p.status).toBe('running');
    expect(p.note).toMatch(/daily limit.*midnight UTC/);
    // The chunk in flight is written once it ends (at midnight): no row has been answered with the limit.
    expect(p.refused).toBe(0);
  });
});

describeStores('batch jobs paced and restarted (%s)', (kind: StoreKind) => {
  test('the rate limit paces a job: every row is answered, none refused for the rate', async () => {
    const server = await startServer({ DATABASE_URL: kind.url(), RATE_LIMIT: '40', RATE_LIMIT_BURST: '0' });
    try {
      const started = Date.now();
      const res = await submit(server, 'paced', 'operation,registration\n' + 'Check,RG11 ABC\n'.repeat(120));
      const { id } = (await res.json()) as Progress;
      const p = await poll(server, id, 'paced', (q) => q.status !== 'running');
      expect(p).toMatchObject({ status: 'done', found: 120, refused: 0 });
      // 120 lookups at 40 a second take about 3 s: paced, not answered at once.
      expect(Date.now() - started).toBeGreaterThan(2000);
    } finally {
      await server.close();
    }
  });

  test('a job running when the service stops resumes in the next one, at its caller’s next call, charging no row twice', async () => {
    const url = kind.url();
    const env = { DATABASE_URL: url, RATE_LIMIT: '100', RATE_LIMIT_BURST: '0' };
    let server = await startServer(env);
    await server.store.accounts.addAccount({ username: key('restart'), credits: 1000 });
    const rows = 'operation,registration\n' + 'Check,RG11 ABC\nCheck,ZZ99 ZZZ\n'.repeat(200);
    const { id } = (await (await submit(server, 'restart', rows)).json()) as Progress;
    const mid = await poll(server, id, 'restart', (q) => q.done >= 100);
    expect(mid.status).toBe('running');
    await server.close();

    server = await startServer(env, { sample: false });
    try {
      // The new process takes the job up on its own, before its caller asks: the store has all it needs.
      const done = async () => (await server.store.batches.get(id))?.done ?? 0;
      for (let i = 0; i < 200 && (await done()) <= mid.done; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await done()).toBeGreaterThan(mid.done);
      const p = await poll(server, id, 'restart', (q) => q.status !== 'running');
      expect(p).toMatchObject({ status: 'done', done: 400, found: 200, notFound: 200, refused: 0 });
      const table = await csvResults(server, id, 'restart');
      expect(table.slice(1).map((r) => r[4])).toEqual(
        Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? '' : 'VEHICLE_NOT_FOUND')),
      );
      expect(await credits(server, 'restart')).toBe(1000 - 200);
    } finally {
      await server.close();
    }
  });

  test('rows in flight when a process died are answered SERVICE_UNAVAILABLE, not charged again; the rest run', async () => {
    const server = await startServer({ DATABASE_URL: kind.url() });
    try {
      await server.store.accounts.addAccount({ username: key('crashed'), credits: 100 });
      // A job a dead process held: rows 1-3 handed to lookups, none written back (it may have charged them).
      const id = 'CrashedJob0123456789abcd';
      const rows = Array.from({ length: 6 }, () => ({ operation: 'Check', registration: 'RG11 ABC', state: '' }));
      await server.store.batches.create(
        { id, owner: key('crashed'), address: '127.0.0.1', createdAt: Date.now(), runner: 'dead', leaseUntil: 0 },
        rows,
      );
      await server.store.batches.claim(id, 'dead', 3, 0);
      const p = await poll(server, id, 'crashed', (q) => q.status !== 'running');
      expect(p).toMatchObject({ status: 'done', done: 6, found: 3, refused: 3 });
      const table = await csvResults(server, id, 'crashed');
      expect(table.slice(1).map((r) => r[4])).toEqual([
        'SERVICE_UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
        '',
        '',
        '',
      ]);
      expect(await credits(server, 'crashed')).toBe(97);
    } finally {
      await server.close();
    }
  });

  test('a finished job and its results are deleted after BATCH_RETENTION_HOURS', async () => {
    const server = await startServer({ DATABASE_URL: kind.url(), BATCH_RETENTION_HOURS: '0.0005' });
    try {
      const { id } = (await (
        await submit(server, 'brief', 'operation,registration\nCheck,RG11 ABC\n')
      ).json()) as Progress;
      await poll(server, id, 'brief', (q) => q.status === 'done');
      // 0.0005 h is 1.8 s.
      await new Promise((r) => setTimeout(r, 3500));
      const gone = await fetch(`${server.url}/api/batch/${id}`, { headers: basic('brief') });
      expect(gone.status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
