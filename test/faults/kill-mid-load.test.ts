// Fault: the serving process is killed with SIGKILL while a metered caller keeps 8 lookups in
// flight. Counted on both sides after the kill: no answer was sent without its credit taken (credits
// taken >= answers received), credits taken for requests that got no answer are at most the
// requests in flight at the kill (README, Failure modes), and today's count and the usage counts
// of the charged lookups, written with each charge (issue 30), are exact. Run on SQLite and on
// PostgreSQL, where a busy account's charges are committed in batches (one statement per batch).

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runCli, serve } from '../helpers/cli';
import { recordScenario } from './scenario';
import { postgresAvailable, testSchema, type TestSchema } from '../helpers/postgres';

jest.setTimeout(120_000);

const CREDITS = 1_000_000;
const IN_FLIGHT = 8;

function get(url: string, agent: http.Agent): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

const STORES = postgresAvailable() ? ['SQLite', 'PostgreSQL'] : ['SQLite'];

describe.each(STORES)('SIGKILL under metered load on %s', (storeName) => {
  let dir: string;
  let schema: TestSchema | null = null;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-kill-'));
    if (storeName === 'PostgreSQL') schema = testSchema();
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await schema?.drop();
  });

  it('never answers without charging, charges at most the in-flight lookups without an answer, and loses no usage of a charged lookup', async () => {
    const env = { DATABASE_URL: schema ? schema.url : `sqlite:${path.join(dir, 'reglookup.db')}` };
    expect(runCli(['users', 'add', 'payer', '--username', 'payer', '--credits', String(CREDITS)], env).status).toBe(0);
    const server = await serve({ ...env, RATE_LIMIT: '0' });
    const url = `${server.url}/Check?RegistrationNumber=RG11ABC&username=payer`;
    const exited = new Promise<void>((resolve) => server.child.on('exit', () => resolve()));
    let killed = false;
    let answered = 0;
    const failures: string[] = [];
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const loop = async () => {
      while (!killed) {
        const r = await get(url, agent);
        if (r === 200) answered++;
        else if (typeof r === 'number') failures.push(String(r));
        else if (killed) break;
        else failures.push(r);
      }
    };
    const loops = Array.from({ length: IN_FLIGHT }, loop);
    await new Promise((r) => setTimeout(r, 2500));
    server.child.kill('SIGKILL');
    killed = true;
    await exited;
    await Promise.all(loops);
    agent.destroy();
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(100);

    const list = runCli(['users', 'list', '--json'], env);
    expect(list.status).toBe(0);
    const row = (JSON.parse(list.stdout) as { name: string; credits: number; usedToday: number }[]).find(
      (a) => a.name === 'payer',
    )!;
    const taken = CREDITS - row.credits;
    const usage = runCli(['users', 'usage', 'payer', '--json'], env);
    expect(usage.status).toBe(0);
    const counted = (JSON.parse(usage.stdout) as { found: number }[]).reduce((n, u) => n + u.found, 0);

    // Never an answer without its charge; at most the requests in flight charged without an answer.
    expect(taken).toBeGreaterThanOrEqual(answered);
    expect(taken - answered).toBeLessThanOrEqual(IN_FLIGHT);
    // Today's count of a metered account is written with its charge.
    expect(row.usedToday).toBe(taken);
    // Usage counts of charged lookups: written with the charge, so none is lost (issue 30).
    expect(counted).toBe(taken);
    const perSecond = answered / 2.5;

    recordScenario({
      scenario: `SIGKILL under metered load on ${storeName} (8 lookups in flight)`,
      answered: `${answered} x 200 before the kill (about ${Math.round(perSecond)} a second), the requests in flight then got a reset`,
      charged: `${taken} credits taken for ${answered} answers received (${taken - answered} charged without an answer, bound: the ${IN_FLIGHT} in flight); today's count ${row.usedToday}, exact; usage records held ${counted} of ${taken} charged lookups (written with the charge: none lost)`,
      logged:
        'nothing at the kill (SIGKILL cannot be caught); the next start serves the store as the last commit left it',
    });
  });
});
