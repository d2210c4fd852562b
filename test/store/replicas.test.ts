// Read replicas (issue 30, DATABASE_READ_URL): a private primary and a real streaming replica of it,
// made by this test (initdb, pg_basebackup -R, spare ports, a temporary folder; the machine's
// PostgreSQL is left alone). Record lookups are read from the replica; accounts and charges from the
// primary; a replica that falls behind by more than DATABASE_READ_MAX_LAG_MS, or goes away, is
// skipped (lookups go to the primary) and /readyz says so, and it is used again once it is back.

import pg from 'pg';
import { describePostgres } from '../helpers/postgres';
import { postgresBin, privatePrimaryAndReplica, type PrivatePostgres } from '../helpers/private-postgres';
import { startCli, startServeProcess, type ServeProcess } from '../helpers/cli';

jest.setTimeout(180_000);

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const HAVE_SERVER = postgresBin() !== null;
if (!HAVE_SERVER && !IN_CI)
  process.stderr.write(
    'read-replica tests skipped: no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)\n',
  );
const describeReplica = (name: string, fn: () => void) => describePostgres(name, fn, () => HAVE_SERVER || IN_CI);

async function sql(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

async function until(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Imports one Check record with this registration into the primary, from another process (as an operator does). */
async function importRecord(env: Record<string, string>, registration: string): Promise<void> {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-replica-')), 'one.ndjson');
  fs.writeFileSync(
    file,
    JSON.stringify({ operation: 'Check', registration, vehicle: { Description: `replica test ${registration}` } }) +
      '\n',
  );
  const run = startCli(['import', file], env);
  expect(await run.exited).toBe(0);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

describeReplica('read replicas on a private primary and streaming replica', () => {
  let primary: PrivatePostgres;
  let replica: PrivatePostgres;
  let srv: ServeProcess;
  /** The same, allowed a replica 10 minutes behind: it reads from the paused replica throughout. */
  let patient: ServeProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ primary, replica } = await privatePrimaryAndReplica());
    env = { DATABASE_URL: primary.url };
    // The schema first, on the primary; the replica receives it by streaming.
    expect(await startCli(['migrate'], env).exited).toBe(0);
    [srv, patient] = await Promise.all([
      startServeProcess({ ...env, DATABASE_READ_URL: replica.url, DATABASE_READ_MAX_LAG_MS: '500', RATE_LIMIT: '0' }),
      startServeProcess({
        ...env,
        DATABASE_READ_URL: replica.url,
        DATABASE_READ_MAX_LAG_MS: '600000',
        RATE_LIMIT: '0',
        SAMPLE_DATA: 'false',
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([srv?.stop(), patient?.stop()]);
    replica?.destroy();
    primary?.destroy();
  });

  const lookup = (reg: string, username = 'demo', on = srv) =>
    fetch(`${on.base}/api/reg.asmx/Check?RegistrationNumber=${reg}&username=${username}`);
  const readyz = async (on = srv) =>
    (await (await fetch(`${on.base}/readyz`)).json()) as {
      status: string;
      checks: Record<string, string>;
      degraded?: string;
    };
  /** The gauge an alert watches (docs/operating.md, ReglookupReplicaDegraded): 1 read, 0 skipped. */
  const replicaUp = async (on = srv) => {
    const text = await (await fetch(`${on.base}/metrics`)).text();
    const m = /^reglookup_store_replica_up\{replica="1"\} (\d+)$/m.exec(text);
    return m ? Number(m[1]) : undefined;
  };

  test('the replica really is a streaming standby of the primary', async () => {
    expect((await sql(replica.url, 'SELECT pg_is_in_recovery() AS r'))[0].r).toBe(true);
    expect((await sql(primary.url, 'SELECT count(*)::int AS n FROM pg_stat_replication'))[0].n).toBe(1);
  });

  test('lookups are read from the replica (a record it has not replayed is not found), accounts and charges from the primary', async () => {
    await until(
      'the replica in use',
      async () => (await readyz()).checks.replicas === 'ok' && (await readyz(patient)).checks.replicas === 'ok',
    );
    expect(await replicaUp()).toBe(1);
    await sql(replica.url, 'SELECT pg_wal_replay_pause()');
    try {
      // Written to the primary while the replica's replay is paused.
      await importRecord(env, 'RPL1');
      expect(await startCli(['users', 'add', 'payer', '--username', 'payer', '--credits', '5'], env).exited).toBe(0);
      // The instance that allows 10 minutes of lag reads the replica, which does not hold it yet...
      expect((await lookup('RPL1', 'demo', patient)).status).toBe(404);
      // ...while the account made after the pause is known to it (accounts are read from the primary), and
      // it still serves the sample data the import has since replaced on the primary.
      expect((await lookup('RG11ABC', 'payer', patient)).status).toBe(200);
      await until('the replica skipped, lag past 500 ms', async () => (await readyz()).checks.replicas === 'degraded');
      const ready = await readyz();
      expect(ready.status).toBe('ready');
      expect(ready.degraded).toMatch(
        /replica 1: skipped \(behind by more than 500 ms\).*record lookups go to the primary/,
      );
      expect(await replicaUp()).toBe(0);
      expect(await replicaUp(patient)).toBe(1);
      // Skipped: the lookup goes to the primary, which has the record; the charge is taken there.
      expect((await lookup('RPL1')).status).toBe(200);
      expect((await lookup('RPL1', 'payer')).status).toBe(200);
      expect((await sql(primary.url, `SELECT credits::int AS c FROM accounts WHERE name = 'payer'`))[0].c).toBe(3);
    } finally {
      await sql(replica.url, 'SELECT pg_wal_replay_resume()');
    }
    await until('the replica in use again', async () => (await readyz()).checks.replicas === 'ok');
    expect(await replicaUp()).toBe(1);
    expect((await lookup('RPL1')).status).toBe(200);
    expect((await lookup('RPL1', 'demo', patient)).status).toBe(200);
  });

  test('a replica that goes away is skipped without a failed lookup, and used again when it is back', async () => {
    replica.stop();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await lookup('RPL1')).status);
      expect(statuses).toEqual(Array(20).fill(200));
      const ready = await readyz();
      expect(ready.status).toBe('ready');
      expect(ready.checks.replicas).toBe('degraded');
      expect(ready.degraded).toMatch(/replica 1: skipped/);
      expect(await replicaUp()).toBe(0);
    } finally {
      replica.start();
    }
    await until('the replica in use again', async () => (await readyz()).checks.replicas === 'ok');
    expect((await lookup('RPL1')).status).toBe(200);
  });
});
