// Usage records as the README's "Managing callers" describes them: per username, UTC day and
// operation, the lookups answered with a record and those answered VEHICLE_NOT_FOUND; counted in
// memory and written every second and when the server stops; kept USAGE_DAYS days. The store is
// a recording fake (its contract is test/store/accounts.test.ts's); the clock is Jest's.

import { FLUSH_MS, UsageRecorder } from '../../src/accounts/usage';
import type { Logger } from '../../src/ops/logger';
import type { AccountStore, UsageCount } from '../../src/store/accounts';

class FakeStore {
  batches: UsageCount[][] = [];
  prunes: string[] = [];
  failNext = 0;
  failPrune = false;
  async addUsage(counts: readonly UsageCount[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('database is locked');
    }
    this.batches.push(counts.map((c) => ({ ...c })));
  }
  async pruneUsage(beforeDay: string): Promise<number> {
    this.prunes.push(beforeDay);
    if (this.failPrune) throw new Error('canceling statement due to statement timeout');
    return 0;
  }
}

function setup(keepDays = 400) {
  const store = new FakeStore();
  const errors: Array<{ message: string; meta: unknown }> = [];
  const logger = {
    error: (message: string, meta: unknown) => errors.push({ message, meta }),
    warn() {},
    info() {},
    debug() {},
  } as unknown as Logger;
  const usage = new UsageRecorder({ accounts: store as unknown as AccountStore }, keepDays, logger);
  return { store, errors, usage };
}

const sorted = (b: UsageCount[]) =>
  [...b].sort((x, y) => `${x.username} ${x.day} ${x.operation}`.localeCompare(`${y.username} ${y.day} ${y.operation}`));

describe('UsageRecorder', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 10, 23, 12, 0, 0) });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('counts found and not found per username, day and operation; one batch per flush', async () => {
    const { store, usage } = setup();
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', false);
    usage.record('alice', '2026-11-23', 'UKMOT', false);
    usage.record('alice', '2026-11-22', 'Check', true);
    usage.record('bob', '2026-11-23', 'Check', true);
    await usage.flush();
    expect(store.batches).toHaveLength(1);
    expect(sorted(store.batches[0])).toEqual([
      { username: 'alice', day: '2026-11-22', operation: 'Check', found: 1, notFound: 0 },
      { username: 'alice', day: '2026-11-23', operation: 'Check', found: 2, notFound: 1 },
      { username: 'alice', day: '2026-11-23', operation: 'UKMOT', found: 0, notFound: 1 },
      { username: 'bob', day: '2026-11-23', operation: 'Check', found: 1, notFound: 0 },
    ]);
    // What was written is not written again.
    usage.record('bob', '2026-11-23', 'Check', false);
    await usage.flush();
    expect(store.batches[1]).toEqual([
      { username: 'bob', day: '2026-11-23', operation: 'Check', found: 0, notFound: 1 },
    ]);
    await usage.close();
  });

  test('names are kept apart even when one could be read as another joined with its day', async () => {
    const { store, usage } = setup();
    usage.record('a', 'b c', 'd', true);
    usage.record('a b', 'c', 'd', true);
    await usage.flush();
    expect(store.batches[0]).toHaveLength(2);
    await usage.close();
  });

  test('written every second without being asked (what a SIGKILL can lose: README, Failure modes)', async () => {
    expect(FLUSH_MS).toBe(1000);
    const { store, usage } = setup();
    usage.record('alice', '2026-11-23', 'Check', true);
    await jest.advanceTimersByTimeAsync(999);
    expect(store.batches).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(store.batches).toHaveLength(1);
    usage.record('alice', '2026-11-23', 'Check', true);
    await jest.advanceTimersByTimeAsync(1000);
    expect(store.batches).toHaveLength(2);
    await usage.close();
  });

  test('close writes what is left and stops the timer', async () => {
    const { store, usage } = setup();
    usage.record('alice', '2026-11-23', 'Check', true);
    await usage.close();
    expect(store.batches.flat()).toEqual([
      { username: 'alice', day: '2026-11-23', operation: 'Check', found: 1, notFound: 0 },
    ]);
    const after = store.batches.length;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(store.batches.length).toBe(after);
  });

  test('a failed write loses no count: the counts are written with the next batch, added to the new ones, and the failure logged', async () => {
    const { store, usage, errors } = setup();
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', false);
    usage.record('bob', '2026-11-23', 'Check', true);
    store.failNext = 1;
    await usage.flush();
    expect(store.batches).toHaveLength(0);
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/usage records/);
    expect((errors[0].meta as { error: string }).error).toBe('database is locked');
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('carol', '2026-11-23', 'Check', false);
    await usage.flush();
    expect(sorted(store.batches[0])).toEqual([
      { username: 'alice', day: '2026-11-23', operation: 'Check', found: 2, notFound: 1 },
      { username: 'bob', day: '2026-11-23', operation: 'Check', found: 1, notFound: 0 },
      { username: 'carol', day: '2026-11-23', operation: 'Check', found: 0, notFound: 1 },
    ]);
    await usage.close();
  });

  test('counts made while a failed write was under way are added to the ones put back', async () => {
    const { store, usage } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const original = store.addUsage.bind(store);
    store.addUsage = async (counts) => {
      await gate;
      return original(counts);
    };
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', false);
    store.failNext = 1;
    const first = usage.flush();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    // The batch is taken; the write has not failed yet.
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', false);
    release();
    await first;
    await usage.flush();
    // Put back (1 found, 1 not found) and added to the counts made meanwhile (1 and 1).
    expect(store.batches).toEqual([
      [{ username: 'alice', day: '2026-11-23', operation: 'Check', found: 2, notFound: 2 }],
    ]);
    await usage.close();
  });

  test('USAGE_DAYS: records before the kept days are pruned, at most once an hour', async () => {
    // USAGE_DAYS=7 on 2026-11-23: the 7 days kept are 2026-11-17 to 2026-11-23.
    const { store, usage } = setup(7);
    usage.record('alice', '2026-11-23', 'Check', true);
    await usage.flush();
    expect(store.prunes).toEqual(['2026-11-17']);
    await usage.flush();
    jest.setSystemTime(Date.UTC(2026, 10, 23, 12, 59, 59, 999));
    await usage.flush();
    expect(store.prunes).toEqual(['2026-11-17']);
    jest.setSystemTime(Date.UTC(2026, 10, 23, 13, 0, 0, 0));
    await usage.flush();
    expect(store.prunes).toEqual(['2026-11-17', '2026-11-17']);
    await usage.close();
  });

  test('a prune that fails after the counts were written does not write them again', async () => {
    const { store, usage } = setup(7);
    store.failPrune = true;
    usage.record('alice', '2026-11-23', 'Check', true);
    usage.record('alice', '2026-11-23', 'Check', false);
    await usage.flush();
    expect(store.prunes).toEqual(['2026-11-17']);
    // The next flushes have nothing new: nothing is written again.
    await usage.flush();
    await usage.flush();
    usage.record('bob', '2026-11-23', 'Check', true);
    await usage.close();
    expect(store.batches).toEqual([
      [{ username: 'alice', day: '2026-11-23', operation: 'Check', found: 1, notFound: 1 }],
      [{ username: 'bob', day: '2026-11-23', operation: 'Check', found: 1, notFound: 0 }],
    ]);
  });

  test('USAGE_DAYS=1 keeps today only', async () => {
    const { store, usage } = setup(1);
    await usage.flush();
    expect(store.prunes).toEqual(['2026-11-23']);
    await usage.close();
  });

  test('a great many distinct counts are written at once, without waiting for the timer', async () => {
    const { store, usage } = setup();
    for (let i = 0; i < 60_000; i++) usage.record(`u${i}`, '2026-11-23', 'Check', true);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    // Written before the 5 s timer had a chance to fire.
    expect(store.batches.length).toBeGreaterThan(0);
    expect(store.batches[0].length).toBeGreaterThan(0);
    await usage.close();
    expect(store.batches.flat()).toHaveLength(60_000);
  });
});

test('a second burst after an early write is written early too, not left for the timer', async () => {
  jest.useFakeTimers({ now: Date.UTC(2026, 10, 23, 12, 0, 0) });
  try {
    const { store, usage } = setup();
    for (let i = 0; i < 60_000; i++) usage.record(`first${i}`, '2026-11-23', 'Check', true);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    const afterFirst = store.batches.length;
    expect(afterFirst).toBeGreaterThan(0);
    for (let i = 0; i < 60_000; i++) usage.record(`second${i}`, '2026-11-23', 'Check', true);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    // Still before the 5 s timer: the second burst was written as the first was.
    expect(store.batches.length).toBeGreaterThan(afterFirst);
    expect(store.batches.flat().filter((c) => c.username.startsWith('second')).length).toBeGreaterThan(0);
    await usage.close();
    expect(store.batches.flat()).toHaveLength(120_000);
  } finally {
    jest.useRealTimers();
  }
});

describe('UsageRecorder under a burst of distinct callers', () => {
  test('60,000 new counts in one go: one early write when the pending counts grow large, then the rest; no empty writes, nothing lost', async () => {
    const { store, usage } = setup();
    for (let i = 0; i < 60_000; i++) usage.record(`user${i}`, '2026-11-23', 'Check', true);
    await usage.close();
    expect(store.batches.length).toBeLessThanOrEqual(3);
    expect(store.batches.every((b) => b.length > 0)).toBe(true);
    const written = store.batches.flat();
    expect(written).toHaveLength(60_000);
    expect(new Set(written.map((c) => c.username)).size).toBe(60_000);
  });

  test('while the store fails, a burst asks for one write at a time, not one a new caller', async () => {
    const { store, usage } = setup();
    store.failNext = 1_000;
    for (let i = 0; i < 60_000; i++) usage.record(`user${i}`, '2026-11-23', 'Check', false);
    await new Promise((r) => setImmediate(r));
    const attempts = 1_000 - store.failNext;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(2);
    store.failNext = 0;
    await usage.close();
    expect(store.batches.flat().reduce((n, c) => n + c.notFound, 0)).toBe(60_000);
  });
});
