// Fault: the disk holding the SQLite store fills up while lookups are answered from an upstream
// (issue 43, point 6). A fetched answer was paid for: it is served all the same, uncached (so its
// next lookup asks the upstream again); a metered caller is charged for each answer it gets and for
// nothing else; one error line says the cache cannot be written, reglookup_store_up is 0 and /readyz
// says the store is degraded. Once space is freed, answers are cached again.

import path from 'node:path';
import { runCli, serve, type Served } from '../helpers/cli';
import { describeSmallDisk, mountSmallDisk, type SmallDisk } from '../helpers/smalldisk';
import { AA19AAA, DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';
import { recordScenario } from './scenario';

jest.setTimeout(120_000);

const CREDITS = 100;
const plates = Array.from({ length: 40 }, (_, i) => `FULL${String(i).padStart(3, '0')}`);

function creditsOf(env: Record<string, string>, username: string): number {
  const r = runCli(['users', 'list', '--json'], env);
  expect(r.status).toBe(0);
  const row = (JSON.parse(r.stdout) as { name: string; credits: number }[]).find((a) => a.name === username);
  return (row as { credits: number }).credits;
}

describeSmallDisk('upstream answers on a full disk (SQLite)', () => {
  let disk: SmallDisk;
  let dvla: FakeDvla;
  let env: Record<string, string>;
  let server: Served | undefined;

  beforeAll(async () => {
    disk = mountSmallDisk(4096);
    env = { DATABASE_URL: `sqlite:${path.join(disk.dir, 'reglookup.db')}` };
    dvla = await startFakeDvla({
      records: Object.fromEntries(plates.map((p) => [p, { ...AA19AAA, registrationNumber: p }])),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await dvla.close();
    disk.remove();
  });

  // A connection each, as in store-full.test.ts: the test blocks longer than the server keeps an idle connection.
  const lookup = (reg: string, username: string) =>
    fetch(`${server!.url}/Check?RegistrationNumber=${reg}&username=${username}`, {
      headers: { connection: 'close' },
    }).then(async (r) => ({ status: r.status, body: await r.text() }));
  const base = () => server!.url.replace(/\/api\/reg\.asmx$/, '');
  const storeUp = async () =>
    /^reglookup_store_up (\d)$/m.exec(
      await (await fetch(`${base()}/metrics`, { headers: { connection: 'close' } })).text(),
    )?.[1];
  const readyz = async () => {
    const r = await fetch(`${base()}/readyz`, { headers: { connection: 'close' } });
    return { code: r.status, ...((await r.json()) as { checks: Record<string, string>; degraded?: string }) };
  };

  it('serves fetched answers uncached, charges exactly what it answers, says so, and caches again once freed', async () => {
    expect(runCli(['users', 'add', 'payer', '--username', 'payer', '--credits', String(CREDITS)], env).status).toBe(0);
    server = await serve({
      ...env,
      PROVIDERS: 'dvla',
      DVLA_URL: dvla.url,
      DVLA_API_KEY: DVLA_TEST_KEY,
      SAMPLE_DATA: 'false',
      RATE_LIMIT: '0',
      LOG_FORMAT: 'json',
    });

    // Before the fault: fetched once, then from the cache.
    expect((await lookup(plates[0], 'anyone')).status).toBe(200);
    expect((await lookup(plates[0], 'anyone')).status).toBe(200);
    expect(dvla.calls.get(plates[0])).toBe(1);

    disk.fill();
    // Unmetered: every fetched answer is served; a plate asked twice is fetched twice (nothing could be cached).
    const unmetered: number[] = [];
    for (const p of plates.slice(1, 11)) {
      unmetered.push((await lookup(p, 'anyone')).status);
      unmetered.push((await lookup(p, 'anyone')).status);
    }
    expect(unmetered).toEqual(Array(20).fill(200));
    for (const p of plates.slice(1, 11)) expect(dvla.calls.get(p)).toBe(2);
    expect(await storeUp()).toBe('0');
    const degraded = await readyz();
    expect(degraded.code).toBe(200);
    expect(degraded.checks.store).toBe('degraded');
    expect(degraded.degraded).toMatch(/fetched upstream answers cannot be cached/);

    // Metered: each answer sent is charged; a charge the full disk refuses is a 503 and nothing charged.
    const metered: { status: number; body: string }[] = [];
    for (const p of plates.slice(11, 31)) metered.push(await lookup(p, 'payer'));
    const ok = metered.filter((a) => a.status === 200).length;
    for (const a of metered.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(503);
      expect(a.body).toMatch(/^SERVICE_UNAVAILABLE: .*nothing was charged/);
    }

    disk.free();
    expect((await lookup(plates[31], 'anyone')).status).toBe(200);
    expect((await lookup(plates[31], 'anyone')).status).toBe(200);
    expect(dvla.calls.get(plates[31])).toBe(1);
    // A metered lookup writes its charge: the store takes writes again, and says so.
    expect((await lookup(plates[32], 'payer')).status).toBe(200);
    expect(await storeUp()).toBe('1');
    expect((await readyz()).checks.store).toBe('ok');
    const log = server.output();
    await server.stop();
    server = undefined;

    const left = creditsOf(env, 'payer');
    expect(CREDITS - left).toBe(ok + 1);
    const lines = log
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; message: string; error?: string });
    const cacheDown = lines.filter((l) => l.message.startsWith('store cannot cache upstream answers'));
    const cacheBack = lines.filter((l) => l.message.startsWith('store caches upstream answers again'));
    // At the edge of a full disk a small write can still fit after one failed (store-full.test.ts): one line per
    // change, a few at most.
    expect(cacheDown.length).toBeGreaterThanOrEqual(1);
    expect(cacheDown.length).toBeLessThanOrEqual(3);
    expect(cacheBack).toHaveLength(cacheDown.length);
    for (const l of cacheDown) {
      expect(l.level).toBe('error');
      expect(l.error).toMatch(/disk is full/);
    }
    expect(log).not.toMatch(/\n\s+at /);
    recordScenario({
      scenario: 'upstream answers on a full SQLite disk',
      answered: `unmetered: 20 x 200 for 10 plates (each fetched twice, nothing cached); metered: ${ok} x 200, ${metered.length - ok} x 503; after freeing space: cached again`,
      charged: `${CREDITS - left} credits taken for ${ok + 1} metered answers sent (${ok} during the fault)`,
      logged: `${cacheDown.length} error line(s) '${cacheDown[0].message.split(':')[0]}', ${cacheBack.length} '${cacheBack[cacheBack.length - 1].message}'; reglookup_store_up 0 and /readyz store "degraded" meanwhile`,
    });
  });
});
