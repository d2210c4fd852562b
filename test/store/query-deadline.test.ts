// Every PostgreSQL call has a deadline kept by the service itself (DATABASE_QUERY_TIMEOUT_MS,
// docs/configuration.md): a server that accepts and never answers, or a statement that runs past
// it, costs a call at most the deadline; the connection is closed, not handed to the next call; the
// store is reported down once, further calls are refused at once, and it is back when a probe is
// answered. The hung server of the first block is a TCP listener that never says a word.

import net from 'node:net';
import pg from 'pg';
import { describePostgres, testSchema, type TestSchema } from '../helpers/postgres';
import { PostgresStore } from '../../src/store/postgres';
import { QueryTimeoutError, withDeadline } from '../../src/store/postgres-deadline';
import { StoreUnavailableError, type StoreWatcher } from '../../src/store/store';

describe('a call on a server that accepts and never answers', () => {
  let silent: net.Server;
  let port: number;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    port = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  test('fails with a time-out at its deadline, not when the server answers', async () => {
    const pool = new pg.Pool({ connectionString: `postgres://x@127.0.0.1:${port}/x`, max: 1 });
    const t0 = Date.now();
    await expect(withDeadline(pool, t0 + 300, 'PostgreSQL', (c) => c.query('SELECT 1'))).rejects.toBeInstanceOf(
      QueryTimeoutError,
    );
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1000);
    // The connection still waiting for the server's greeting fails when the server hangs up.
    for (const s of sockets) s.destroy();
    await pool.end().catch(() => undefined);
  });
});

/**
 * A TCP proxy to the test database that can freeze: while frozen it accepts connections and passes
 * no byte either way, as a hung server does (the kernel accepts, nothing answers).
 */
async function freezableProxy(target: URL): Promise<{ url: string; freeze(): void; thaw(): void; close(): void }> {
  let frozen = false;
  const held: (() => void)[] = [];
  const sockets: net.Socket[] = [];
  const pipe = (from: net.Socket, to: net.Socket) =>
    from.on('data', (d: Buffer) => {
      if (frozen) held.push(() => to.write(d));
      else to.write(d);
    });
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port || 5432), target.hostname);
    sockets.push(inbound, outbound);
    pipe(inbound, outbound);
    pipe(outbound, inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const u = new URL(target.toString());
  u.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url: u.toString(),
    freeze: () => (frozen = true),
    thaw: () => {
      frozen = false;
      for (const f of held.splice(0)) f();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describePostgres('DATABASE_QUERY_TIMEOUT_MS', () => {
  let schema: TestSchema;
  let proxy: Awaited<ReturnType<typeof freezableProxy>>;
  let store: PostgresStore;
  const events: string[] = [];
  const watcher: StoreWatcher = {
    down: (s) => events.push(`down ${s}`),
    up: (s) => events.push(`up ${s}`),
    refused: () => undefined,
  };
  /** The store's own pooled call (private; the accounts and admin sides use it the same way). */
  const call = (text: string) =>
    (store as unknown as { query(n: string, t: string, v: unknown[]): Promise<pg.QueryResult> }).query(
      text.replace(/\W+/g, '-').slice(0, 40),
      text,
      [],
    );
  const answered = () =>
    call('SELECT 1').then(
      () => true,
      () => false,
    );

  beforeEach(async () => {
    schema = testSchema();
    proxy = await freezableProxy(new URL(schema.url));
    store = new PostgresStore(proxy.url, { queryTimeoutMs: 400, pool: 2 });
    await store.migrate();
    events.length = 0;
    store.watch(watcher);
  });
  afterEach(async () => {
    proxy.thaw();
    await store.close();
    proxy.close();
    await schema.drop();
  });

  test('a slow statement on a server that answers: cut off at the deadline, its connection closed, the store not marked down', async () => {
    const t0 = Date.now();
    // Two seconds: far past the client's 400 ms, well within the server's own 5 s statement timeout.
    await expect(call('SELECT pg_sleep(2)')).rejects.toBeInstanceOf(StoreUnavailableError);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(1200);
    // The probe on a connection of its own is answered: busy, not hung; the next call is served.
    await new Promise((r) => setTimeout(r, 600));
    expect(await answered()).toBe(true);
    expect(events).toEqual([]);
    // The sleeping connection was not given back to the pool.
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    expect(pool.totalCount).toBeLessThanOrEqual(1);
  });

  test('a hung server: down once, calls refused at once while it hangs, back when a probe is answered', async () => {
    expect(await answered()).toBe(true);
    proxy.freeze();
    const t0 = Date.now();
    await expect(call('SELECT 2')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - t0).toBeLessThan(1000);
    // The probe (its own deadline of 400 ms) finds no answer either.
    await new Promise((r) => setTimeout(r, 700));
    expect(events).toEqual(['down PostgreSQL']);
    const t1 = Date.now();
    await expect(call('SELECT 3')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - t1).toBeLessThan(100);

    proxy.thaw();
    const until = Date.now() + 5000;
    let ok = false;
    while (!ok && Date.now() < until) {
      ok = await answered();
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ok).toBe(true);
    expect(events).toEqual(['down PostgreSQL', 'up PostgreSQL']);
  });
});
