// Fault: SIGTERM while callers keep sending, with kept-alive connections and without, through a
// balancer that polls /readyz every 100 ms and stops sending once it answers 503. The graceful stop
// (README, Signals and shutdown) reports /readyz 503 while it drains, answers every request that
// reaches it meanwhile, tells kept-alive clients to close with `Connection: close` on an answer
// instead of closing under them, and only then stops listening. Counted from the callers' side:
// answers, refusals (ECONNREFUSED: nothing was sent) and resets (ECONNRESET, EPIPE, a hang-up: a
// request sent and never answered); behind the balancer there must be neither refusals nor resets.
// Callers that ignore /readyz and reconnect in a tight loop until the process is gone are counted
// too, for the summary: the kernel resets connections still in the listener's accept queue when it
// closes, which no server can answer.

import http from 'node:http';
import { serve } from '../helpers/cli';
import { recordScenario } from './scenario';

jest.setTimeout(120_000);

interface Tally {
  ok: number;
  closeHeaders: number;
  refused: number;
  resets: string[];
  other: string[];
}

function get(
  url: string,
  agent: http.Agent,
): Promise<{ status: number; connection: string | undefined } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
  });
}

async function caller(url: string, agent: http.Agent, running: () => boolean, t: Tally): Promise<void> {
  while (running()) {
    const r = await get(url, agent);
    if ('status' in r) {
      if (r.status === 200) t.ok++;
      else t.other.push(String(r.status));
      if (r.connection === 'close') t.closeHeaders++;
    } else if (r.error === 'ECONNREFUSED') {
      t.refused++;
      // A refused connection: the caller backs off a little, as a client or balancer would.
      await new Promise((res) => setTimeout(res, 10));
    } else if (['ECONNRESET', 'EPIPE', 'socket hang up', 'ECONNABORTED'].includes(r.error)) t.resets.push(r.error);
    else t.other.push(r.error);
  }
}

describe('SIGTERM under load', () => {
  it('answers every request that reached it, resets no connection, and drains with /readyz 503 first', async () => {
    const server = await serve({ DATABASE_URL: 'sqlite::memory:', RATE_LIMIT: '0', SHUTDOWN_DRAIN_MS: '1500' });
    const lookup = `${server.url}/Check?RegistrationNumber=RG11ABC&username=drain`;
    const readyz = server.url.replace('/api/reg.asmx', '/readyz');
    let exited = false;
    const exit = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)));
    void exit.then(() => (exited = true));
    const running = () => !exited;
    // The balancer: sends while /readyz has not said 503.
    let withdrawn = false;
    const sending = () => !exited && !withdrawn;

    const keepAlive: Tally = { ok: 0, closeHeaders: 0, refused: 0, resets: [], other: [] };
    const fresh: Tally = { ok: 0, closeHeaders: 0, refused: 0, resets: [], other: [] };
    const kaAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const noKaAgent = new http.Agent({ keepAlive: false, maxSockets: 8 });
    const hammer: Tally = { ok: 0, closeHeaders: 0, refused: 0, resets: [], other: [] };
    const hammerAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const readyStatuses: number[] = [];
    const watcher = (async () => {
      const agent = new http.Agent({ keepAlive: false });
      while (running()) {
        const r = await get(readyz, agent);
        if ('status' in r) readyStatuses.push(r.status);
        if ('status' in r && r.status === 503) withdrawn = true;
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    const loops = [
      ...Array.from({ length: 16 }, () => caller(lookup, kaAgent, sending, keepAlive)),
      ...Array.from({ length: 8 }, () => caller(lookup, noKaAgent, sending, fresh)),
      ...Array.from({ length: 4 }, () => caller(lookup, hammerAgent, running, hammer)),
    ];
    // Load for a second, then the signal.
    await new Promise((r) => setTimeout(r, 1000));
    const before = keepAlive.ok + fresh.ok;
    server.child.kill('SIGTERM');
    const code = await exit;
    await Promise.all([...loops, watcher]);
    kaAgent.destroy();
    noKaAgent.destroy();
    hammerAgent.destroy();

    expect(code).toBe(0);
    expect(before).toBeGreaterThan(0);
    // Served through the drain: /readyz said 503 while lookups were still answered.
    expect(readyStatuses).toContain(503);
    expect(withdrawn).toBe(true);
    expect(hammer.closeHeaders).toBeGreaterThan(0);
    expect(keepAlive.other).toEqual([]);
    expect(fresh.other).toEqual([]);
    expect(keepAlive.resets).toEqual([]);
    expect(fresh.resets).toEqual([]);
    expect(keepAlive.refused + fresh.refused).toBe(0);
    expect(hammer.other).toEqual([]);
    const stopped = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"message":"stopped"'));
    expect(stopped).toHaveLength(1);
    expect(JSON.parse(stopped[0]).cut).toBe(false);

    recordScenario({
      scenario:
        'SIGTERM under load (1 process; 16 kept-alive and 8 one-shot callers behind a /readyz-polling balancer, 4 kept-alive callers ignoring /readyz)',
      answered: `behind the balancer: ${keepAlive.ok + fresh.ok} x 200 (${keepAlive.ok + fresh.ok - before} after the signal), ${keepAlive.refused + fresh.refused} refused, ${keepAlive.resets.length + fresh.resets.length} resets; ignoring /readyz: ${hammer.ok} x 200 (${hammer.closeHeaders} with Connection: close), ${hammer.refused} refused once the listener closed, ${hammer.resets.length} reset in the accept queue at that moment; /readyz 503 from the signal on`,
      charged: 'n/a (unmetered caller)',
      logged: "'shutting down' with the drain, then 'stopped' with cut: false; exit 0",
    });
  });
});
