// The rate limit of WORKERS > 1 without Redis, in one test process: the README's configuration table
// ("all of them share one rate limit (in the primary process ...)") and RATE_LIMIT_ON_REDIS_ERROR
// ("Also what a worker of WORKERS > 1 without Redis does when the primary process does not answer
// within 2 s"). node:cluster is replaced by a stand-in that says this process is a worker, and the
// IPC channel between worker and primary by two direct calls (process.send delivers to the
// primary's cluster 'message' listeners, worker.send to the process's 'message' listeners), so the
// primary's side (hostSharedLimits) and the workers' side run here, where Stryker's mutants are
// active. test/redis/shared-limit.test.ts checks the same with real processes.

import { EventEmitter } from 'node:events';

const mockCluster = Object.assign(new EventEmitter(), {
  isWorker: true,
  isPrimary: false,
  isMaster: false,
  workers: {},
});
jest.mock('node:cluster', () => mockCluster);
jest.mock('cluster', () => mockCluster);

import { FlexibleRateLimiter, hostSharedLimits, type LimiterConfig } from '../../src/accounts/limiter';
import { fakeLogger } from '../helpers/logger';

jest.setTimeout(15_000);

/** Whether the primary answers: when false, what a worker sends is lost. */
let primaryAnswers = true;
/** Every message a worker sent the primary. */
const sent: unknown[] = [];
const worker = {
  send: (msg: unknown) => setImmediate(() => process.emit('message', msg, undefined)),
  isConnected: () => true,
};
const realSend = process.send;

beforeAll(() => {
  process.send = ((msg: unknown) => {
    sent.push(msg);
    if (primaryAnswers) setImmediate(() => mockCluster.emit('message', worker, msg));
    return true;
  }) as typeof process.send;
});
afterAll(() => {
  process.send = realSend;
});

function limiter(config: Partial<LimiterConfig> = {}) {
  const { logger, lines } = fakeLogger();
  const l = new FlexibleRateLimiter(
    { burst: 0, redisUrl: null, redisPrefix: 'cluster:', onError: 'deny', ...config },
    logger,
  );
  return { l, lines };
}

describe('WORKERS > 1 without Redis', () => {
  test('the primary keeps one limit for every worker: at 1 a second, one lookup between two workers', async () => {
    primaryAnswers = true;
    hostSharedLimits({ burst: 0, redisUrl: null, redisPrefix: 'shared:', onError: 'deny' }, fakeLogger().logger);
    const a = limiter({ redisPrefix: 'shared:' });
    const b = limiter({ redisPrefix: 'shared:' });
    expect(await a.l.consume('both', 1)).toBeNull();
    expect(await b.l.consume('both', 1)).toEqual({ retryAfter: 1, unavailable: false });
    expect(await a.l.consume('both', 1)).toEqual({ retryAfter: 1, unavailable: false });
    // Another username has its own count.
    expect(await b.l.consume('other', 1)).toBeNull();
    expect([...a.lines, ...b.lines]).toEqual([]);
  });

  test('the lookups of one turn go to the primary in one message, and each gets its own answer in the order asked', async () => {
    primaryAnswers = true;
    const { l, lines } = limiter();
    sent.length = 0;
    const answers = await Promise.all(Array.from({ length: 5 }, () => l.consume('turn', 3)));
    expect(answers).toEqual([
      null,
      null,
      null,
      { retryAfter: 1, unavailable: false },
      { retryAfter: 1, unavailable: false },
    ]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      asks: [
        ['turn', 3],
        ['turn', 3],
        ['turn', 3],
        ['turn', 3],
        ['turn', 3],
      ],
    });
    // The next turn is the next message.
    expect(await l.consume('turn2', 3)).toBeNull();
    expect(sent).toHaveLength(2);
    expect(lines).toEqual([]);
  });

  test('two limiters of one worker asking in the same turn each get the answer to their own message', async () => {
    primaryAnswers = true;
    const a = limiter({ redisPrefix: 'two:' });
    const b = limiter({ redisPrefix: 'two:' });
    sent.length = 0;
    // One lookup a second for 'pair': a asks first (its message goes first), so b's is the one refused.
    expect(await Promise.all([a.l.consume('pair', 1), b.l.consume('pair', 1)])).toEqual([
      null,
      { retryAfter: 1, unavailable: false },
    ]);
    expect(sent).toHaveLength(2);
  });

  test('the primary not answering within 2 s: RATE_LIMIT_ON_REDIS_ERROR=deny refuses with Retry-After 1, and the warning names the primary process', async () => {
    primaryAnswers = false;
    try {
      const { l, lines } = limiter({ redisPrefix: 'silent:' });
      const t = Date.now();
      expect(await l.consume('lost', 100)).toEqual({ retryAfter: 1, unavailable: true });
      expect(Date.now() - t).toBeGreaterThanOrEqual(1900);
      expect(lines).toHaveLength(1);
      expect(lines[0].level).toBe('warn');
      expect(lines[0].message).toMatch(
        /^the primary process cannot be reached; rate limits are refusing every lookup \(RATE_LIMIT_ON_REDIS_ERROR=deny\)/,
      );
    } finally {
      primaryAnswers = true;
    }
  });

  describe('busy usernames: leases (rates of 100 a second and more)', () => {
    beforeAll(() => {
      primaryAnswers = true;
      // The primary counts two workers.
      mockCluster.workers = { 1: {}, 2: {} };
    });
    afterAll(() => {
      mockCluster.workers = {};
    });

    test("at 200 a second with two workers, the first lookup's answer leases 24 more (what is left, 199, over four times two workers): no message until they are spent", async () => {
      const { l } = limiter({ redisPrefix: 'lease1:' });
      sent.length = 0;
      expect(await l.consume('busy', 200)).toBeNull();
      expect(sent).toHaveLength(1);
      for (let i = 0; i < 24; i++) expect(await l.consume('busy', 200)).toBeNull();
      expect(sent).toHaveLength(1);
      // The 26th asks again; left now: 200 - 25 = 175, so the next lease is 21.
      expect(await l.consume('busy', 200)).toBeNull();
      expect(sent).toHaveLength(2);
      for (let i = 0; i < 21; i++) await l.consume('busy', 200);
      expect(sent).toHaveLength(2);
      await l.consume('busy', 200);
      expect(sent).toHaveLength(3);
    });

    test('a worker asks for one lease at a time: turns asked before the lease arrives ask for none, and no leased lookup is lost', async () => {
      const { l } = limiter({ redisPrefix: 'lease5:' });
      sent.length = 0;
      // Two turns, the second sent before the first is answered.
      const first = l.consume('inflight', 200);
      await new Promise((r) => setImmediate(r));
      const second = l.consume('inflight', 200);
      expect(await Promise.all([first, second])).toEqual([null, null]);
      expect(sent).toHaveLength(2);
      expect((sent[0] as { asks: unknown[] }).asks).toEqual([['inflight', 200, 1]]);
      expect((sent[1] as { asks: unknown[] }).asks).toEqual([['inflight', 200]]);
      // One lease, taken when 199 were left: 24. They are admitted without a message, then it asks again.
      for (let i = 0; i < 24; i++) expect(await l.consume('inflight', 200)).toBeNull();
      expect(sent).toHaveLength(2);
      await l.consume('inflight', 200);
      expect(sent).toHaveLength(3);
    });

    test('two workers with leases together admit exactly the rate in a window (100 at 100 a second, turns of five until both are refused), in fewer messages than turns', async () => {
      const a = limiter({ redisPrefix: 'lease2:' });
      const b = limiter({ redisPrefix: 'lease2:' });
      sent.length = 0;
      const t = Date.now();
      let admitted = 0;
      let turns = 0;
      const refusedLast = { a: false, b: false };
      while (!(refusedLast.a && refusedLast.b) && turns < 200) {
        for (const [name, w] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const answers = await Promise.all(Array.from({ length: 5 }, () => w.l.consume('pair-busy', 100)));
          turns++;
          admitted += answers.filter((r) => r === null).length;
          refusedLast[name] = answers.every((r) => r !== null);
        }
      }
      // One window: the rate is per second.
      expect(Date.now() - t).toBeLessThan(1000);
      // Each worker was refused last with its lease spent (a worker asks only then), so every leased lookup was
      // admitted.
      expect(admitted).toBe(100);
      // Without leases every turn is a message.
      expect(sent.length).toBeLessThan(turns);
      expect([...a.lines, ...b.lines]).toEqual([]);
    });

    test('a lease ends with its window: what is left of it is not admitted in the next one', async () => {
      const { l } = limiter({ redisPrefix: 'lease3:' });
      sent.length = 0;
      expect(await l.consume('window', 100)).toBeNull();
      expect(sent).toHaveLength(1);
      // The lease (12 of the 99 left) is not spent; the window ends.
      await new Promise((r) => setTimeout(r, 1100));
      expect(await l.consume('window', 100)).toBeNull();
      // The primary was asked: the old lease was dropped, and this lookup counted in the new window.
      expect(sent).toHaveLength(2);
    });

    test('below 100 a second nothing is leased: every turn asks the primary', async () => {
      const { l } = limiter({ redisPrefix: 'lease4:' });
      sent.length = 0;
      for (let i = 0; i < 3; i++) expect(await l.consume('slow', 99)).toBeNull();
      expect(sent).toHaveLength(3);
    });
  });
});
