// Fault: the disk holding the SQLite store fills up while a metered caller makes lookups. Nothing
// may be answered without its credit written, and no credit may be taken for a refused lookup:
// every 200 is one credit gone from the store, every refusal is SERVICE_UNAVAILABLE (503, with
// Retry-After), and `users credit` on the full disk exits non-zero instead of printing a balance
// it did not write. Once space is freed, lookups are charged again.

import path from 'node:path';
import { runCli, serve, type Served } from '../helpers/cli';
import { describeSmallDisk, mountSmallDisk, type SmallDisk } from '../helpers/smalldisk';
import { recordScenario } from './scenario';

jest.setTimeout(120_000);

const CREDITS = 1000;

function creditsOf(env: Record<string, string>, username: string): number {
  const r = runCli(['users', 'list', '--json'], env);
  expect(r.status).toBe(0);
  const row = (JSON.parse(r.stdout) as { name: string; credits: number }[]).find((a) => a.name === username);
  return (row as { credits: number }).credits;
}

describeSmallDisk('store disk full (SQLite)', () => {
  let disk: SmallDisk;
  let env: Record<string, string>;
  let server: Served | undefined;

  beforeAll(() => {
    disk = mountSmallDisk(4096);
    env = { DATABASE_URL: `sqlite:${path.join(disk.dir, 'reglookup.db')}` };
  });
  afterAll(async () => {
    await server?.stop();
    disk.remove();
  });

  const lookup = (username: string) =>
    // A connection each: the test blocks (filling and freeing the disk) longer than the server keeps an idle
    // connection, and a pooled one it closed meanwhile would fail the next request with 'other side closed'.
    fetch(`${server!.url}/Check?RegistrationNumber=RG11ABC&username=${username}`, {
      headers: { connection: 'close' },
    }).then(async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: await r.text(),
    }));

  it('answers only what it charged, refuses the rest with 503, and recovers when space is freed', async () => {
    expect(runCli(['users', 'add', 'payer', '--username', 'payer', '--credits', String(CREDITS)], env).status).toBe(0);
    server = await serve({ ...env, SAMPLE_DATA: 'true', RATE_LIMIT: '0' });

    // Before the fault: five lookups, five credits.
    for (let i = 0; i < 5; i++) expect((await lookup('payer')).status).toBe(200);

    disk.fill();
    const during: { status: number; retryAfter: string | null; body: string }[] = [];
    for (let i = 0; i < 200; i++) during.push(await lookup('payer'));
    const ok = during.filter((a) => a.status === 200).length;
    const refused = during.filter((a) => a.status === 503);
    // Every answer is one of the two, and a refusal says when to come back.
    expect(ok + refused.length).toBe(during.length);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(r.body).toMatch(/^SERVICE_UNAVAILABLE: /);
    }
    // An unmetered lookup writes nothing and is answered on the full disk.
    expect((await lookup('anybody')).status).toBe(200);

    // The CLI on the full disk: a top-up that cannot be written says so and exits non-zero.
    const credit = runCli(['users', 'credit', 'payer', '500'], env);
    expect(credit.status).not.toBe(0);
    expect(credit.stderr).toMatch(/full/);
    expect(credit.stderr.trim().split('\n')).toHaveLength(1);

    disk.free();
    const after: number[] = [];
    for (let i = 0; i < 5; i++) after.push((await lookup('payer')).status);
    expect(after).toEqual([200, 200, 200, 200, 200]);
    const log = server.output();
    await server.stop();
    server = undefined;

    const left = creditsOf(env, 'payer');
    // Exactly one credit for each answer sent: 5 before, `ok` during, 5 after.
    expect(CREDITS - left).toBe(5 + ok + 5);
    // One line when the store stopped taking writes, one when it took them again; no stack trace.
    const lines = log
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; message: string });
    // At the edge of a full disk a small write can still fit after one failed: the store took writes
    // again, and says so. So the lines alternate, one per change (never one per refused request):
    // unavailable first, back last, as often as the store really changed (a few times at most).
    const watch = lines.filter((l) => l.message.startsWith('store unavailable') || l.message.startsWith('store back'));
    const down = watch.filter((l) => l.message.startsWith('store unavailable'));
    const back = watch.filter((l) => l.message.startsWith('store back'));
    expect(down.length).toBeGreaterThanOrEqual(1);
    expect(down.length).toBeLessThanOrEqual(3);
    expect(back).toHaveLength(down.length);
    watch.forEach((l, i) => expect(l.message.startsWith(i % 2 === 0 ? 'store unavailable' : 'store back')).toBe(true));
    for (const l of down) expect(l.message).toMatch(/^store unavailable: SQLite cannot write: its disk is full/);
    for (const l of back) expect(l.message).toMatch(/^store back: SQLite takes writes again after \d+\.\d s/);
    expect(log).not.toMatch(/\n\s+at /);
    const usageLines = lines.filter((l) => /usage records/.test(l.message));
    recordScenario({
      scenario: 'store disk full (SQLite)',
      answered: `during the fault: ${ok} x 200, ${refused.length} x 503 (Retry-After ${refused[0].retryAfter} s); unmetered lookups 200; after freeing space: 5 x 200`,
      charged: `${CREDITS - left} credits taken for ${5 + ok + 5} answers sent (none lost, none invented); users credit on the full disk exited ${credit.status}`,
      logged: `${down.length} line(s) '${down[0].message.split(';')[0]}', ${back.length} '${back[back.length - 1].message}'; ${usageLines.length} usage-writer line(s) (${usageLines.map((l) => l.message.split(';')[0]).join(', ')}); no stack trace`,
    });
  });
});
