// Client-side deadlines for PostgreSQL calls. The server's statement_timeout bounds a statement the
// server is running; it cannot bound one the server never reads (a hung server: stopped, swapping,
// its disk stalled, a network path that drops without a reset). Here every call on a pooled
// connection races a timer: a connection that has not answered by the deadline is destroyed (never
// given back to the pool, where the next call would queue behind the stuck one) and the call fails
// with QueryTimeoutError, which the store reports as unreachable (SERVICE_UNAVAILABLE).

import pg from 'pg';

/** A call that got no answer in time. `code` makes isUnreachable (postgres.ts) treat it as the server's absence. */
export class QueryTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number, where: string) {
    super(`no answer from ${where} within ${ms} ms`);
    this.name = 'QueryTimeoutError';
  }
}

/**
 * Closes the connection's socket at once. pg's own end() sends Terminate and waits for the server
 * to close its side, which a hung server never does; the pending query fails when the socket closes.
 */
function destroyClient(client: pg.PoolClient, e: Error): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream;
  // Released with an error: the pool drops the client rather than hand it out again.
  client.release(e);
  stream?.destroy?.();
}

/**
 * Runs fn on a connection of `pool`, the wait for a free connection included, before `deadline`
 * (Date.now() ms; null: no deadline). On time-out the connection is destroyed and the call fails
 * with QueryTimeoutError. Any other failure releases the connection as broken (as pg's pool.query
 * does), so that a connection in an unknown state is not reused.
 */
export async function withDeadline<T>(
  pool: pg.Pool,
  deadline: number | null,
  where: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  if (deadline === null) {
    const client = await pool.connect();
    try {
      const out = await fn(client);
      client.release();
      return out;
    } catch (e) {
      client.release(e as Error);
      throw e;
    }
  }
  const ms = Math.max(0, deadline - Date.now());
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueryTimeoutError(ms, where)), ms);
  });
  try {
    const connecting = pool.connect();
    let client: pg.PoolClient;
    try {
      client = await Promise.race([connecting, timeout]);
    } catch (e) {
      // A connection that arrives after the deadline goes back to the pool unused.
      if (e instanceof QueryTimeoutError)
        connecting.then(
          (c) => c.release(),
          () => undefined,
        );
      throw e;
    }
    try {
      const out = await Promise.race([fn(client), timeout]);
      client.release();
      return out;
    } catch (e) {
      if (e instanceof QueryTimeoutError) destroyClient(client, e);
      else client.release(e as Error);
      throw e;
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the server answers a new connection's `SELECT 1` within `ms`. On a connection of its own,
 * not the pool's: a pool whose connections are all busy makes a server look slow that is not hung.
 */
export async function answersWithin(config: pg.ClientConfig, ms: number): Promise<boolean> {
  const client = new pg.Client(config);
  // A connection that fails after the probe gave up is not an error anyone waits for.
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const asked = (async () => {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  })().catch(() => false);
  try {
    return await Promise.race([asked, timeout]);
  } finally {
    clearTimeout(timer);
    (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
  }
}
