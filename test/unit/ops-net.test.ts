// /readyz's decision (src/ops/health.ts), from the README's Health and readiness table: 200
// {"status":"ready","checks":{...}} when every probe answers and no shutdown has begun; otherwise
// not ready, with a reason naming what fails and never the failure's detail; each probe has 2 s to
// answer; a probe that only degrades the service (Redis under RATE_LIMIT_ON_REDIS_ERROR=allow)
// leaves it ready, "degraded". (The Redis probe itself: test/redis/limiter-redis.test.ts.)

import { AddressListError, addressEntryProblem, addressSet, splitList } from '../../src/net/cidr';
import { readiness, type ReadinessProbe } from '../../src/ops/health';

const ok = (name: string): ReadinessProbe => ({ name, check: async () => 1 });
const failing = (name: string, detail: string): ReadinessProbe => ({
  name,
  check: async () => {
    throw new Error(detail);
  },
});
const silent = (name: string): ReadinessProbe => ({ name, check: () => new Promise(() => undefined) });

describe('readiness (README, Health and readiness)', () => {
  test('every probe answering and no shutdown: ready, each probe ok by its name', async () => {
    const r = await readiness([ok('store'), ok('redis')], { stopping: false });
    expect(r).toEqual({ ready: true, checks: { store: 'ok', redis: 'ok' }, details: [] });
  });

  test('a failing store: not ready, "store is failing", the detail (a path) only for the log', async () => {
    const r = await readiness([failing('store', 'unable to open /var/lib/secret.db'), ok('redis')], {
      stopping: false,
    });
    expect(r.ready).toBe(false);
    expect(r.reason).toBe('store is failing');
    expect(r.checks).toEqual({ store: 'failing', redis: 'ok' });
    expect(JSON.stringify({ reason: r.reason, checks: r.checks })).not.toContain('secret');
    expect(r.details).toEqual([{ probe: 'store', error: 'unable to open /var/lib/secret.db' }]);
  });

  test('a probe thrown synchronously or rejecting with a non-Error still counts as failing', async () => {
    const sync: ReadinessProbe = {
      name: 'store',
      check: () => {
        throw new Error('at once');
      },
    };
    const bare: ReadinessProbe = { name: 'redis', check: () => Promise.reject('down') };
    const r = await readiness([sync, bare], { stopping: false });
    expect(r.checks).toEqual({ store: 'failing', redis: 'failing' });
    expect(r.reason).toBe('store is failing; redis is failing');
    expect(r.details).toEqual([
      { probe: 'store', error: 'at once' },
      { probe: 'redis', error: 'down' },
    ]);
  });

  test('a probe silent for 2 s: not ready, said to give no answer in time, not before the 2 s are up', async () => {
    const t0 = Date.now();
    const r = await readiness([silent('store')], { stopping: false });
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(r).toMatchObject({
      ready: false,
      checks: { store: 'no answer in time' },
      reason: 'store did not answer within 2000 ms',
    });
  });

  test('a shutdown under way: not ready whatever the probes say, and it is named first', async () => {
    const r = await readiness([failing('store', 'gone')], { stopping: true });
    expect(r.ready).toBe(false);
    expect(r.checks).toEqual({ shutdown: 'in progress', store: 'failing' });
    expect(r.reason).toBe('the service is shutting down; store is failing');
    const quiet = await readiness([ok('store')], { stopping: true });
    expect(quiet).toMatchObject({
      ready: false,
      reason: 'the service is shutting down',
      checks: { shutdown: 'in progress', store: 'ok' },
    });
  });

  test('the log detail of a silent probe says how long it waited; of a probe failing with nothing, what it failed with', async () => {
    const r = await readiness(
      [
        silent('store'),
        { name: 'redis', check: () => Promise.reject(null) },
        { name: 'queue', check: () => Promise.reject(undefined) },
      ],
      { stopping: false },
    );
    expect(r.details).toEqual([
      { probe: 'store', error: expect.stringContaining('2000 ms') },
      { probe: 'redis', error: 'null' },
      { probe: 'queue', error: 'undefined' },
    ]);
  });

  test('a failure message of any length reaches the log bounded, from its start', async () => {
    const long = 'connect ECONNREFUSED ' + 'x'.repeat(5000);
    const r = await readiness([failing('store', long)], { stopping: false });
    expect(r.details[0].error.length).toBeLessThan(long.length);
    expect(r.details[0].error.length).toBeGreaterThanOrEqual(200);
    expect(long.startsWith(r.details[0].error)).toBe(true);
  });

  test('probes that answer leave no timer behind (a readiness check every few seconds must not pile them up)', async () => {
    jest.useFakeTimers();
    try {
      const r = await readiness([ok('store'), ok('redis')], { stopping: false });
      expect(r.ready).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
      await readiness([failing('store', 'down')], { stopping: false });
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  test('README: with RATE_LIMIT_ON_REDIS_ERROR=allow a failing Redis leaves the service ready, its check "degraded", saying rate limits are not applied', async () => {
    const redis: ReadinessProbe = {
      ...failing('redis', 'connect ECONNREFUSED 10.1.2.3:6379'),
      degraded: 'rate limits are not applied (RATE_LIMIT_ON_REDIS_ERROR=allow)',
    };
    const r = await readiness([ok('store'), redis], { stopping: false });
    expect(r.ready).toBe(true);
    expect(r.reason).toBeUndefined();
    expect(r.checks).toEqual({ store: 'ok', redis: 'degraded' });
    expect(r.degraded).toBe('redis is failing: rate limits are not applied (RATE_LIMIT_ON_REDIS_ERROR=allow)');
    expect(r.degraded).not.toContain('10.1.2.3');
    // A failing store still makes it not ready; the degraded Redis is said beside it.
    const both = await readiness([failing('store', 'down'), redis], { stopping: false });
    expect(both).toMatchObject({
      ready: false,
      reason: 'store is failing',
      checks: { store: 'failing', redis: 'degraded' },
    });
    // A Redis answering: ok, and no degraded field.
    expect(await readiness([ok('store'), { ...ok('redis'), degraded: 'x' }], { stopping: false })).toEqual({
      ready: true,
      checks: { store: 'ok', redis: 'ok' },
      details: [],
    });
  });

  test('no probes and no shutdown: ready with no checks', async () => {
    expect(await readiness([], { stopping: false })).toEqual({ ready: true, checks: {}, details: [] });
  });
});

describe('address lists: TRUST_PROXY and --allow (src/net/cidr.ts)', () => {
  test("the README's examples: CIDRs and single addresses of both families", () => {
    const trust = addressSet(splitList('10.0.0.0/8,::1'));
    expect(trust.list).toEqual(['10.0.0.0/8', '::1']);
    for (const a of ['10.0.0.1', '10.255.255.255', '::1']) expect([a, trust.has(a)]).toEqual([a, true]);
    for (const a of ['11.0.0.1', '9.255.255.255', '::2', '127.0.0.1', ''])
      expect([a, trust.has(a)]).toEqual([a, false]);
    const allow = addressSet(splitList('203.0.113.0/24, 2001:db8::/32'));
    for (const a of ['203.0.113.7', '2001:db8::1', '2001:DB8:ffff::9']) expect([a, allow.has(a)]).toEqual([a, true]);
    for (const a of ['203.0.114.7', '2001:db9::1', 'not an address']) expect([a, allow.has(a)]).toEqual([a, false]);
  });

  test('a single address matches itself only (a /32 or /128), and an IPv4 client seen on a :: socket matches as IPv4', () => {
    const one = addressSet(['192.0.2.10', '2001:db8::10']);
    expect([one.has('192.0.2.10'), one.has('192.0.2.11'), one.has('2001:db8::10'), one.has('2001:db8::11')]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect([one.has('::ffff:192.0.2.10'), one.has('::FFFF:192.0.2.10'), one.has('::ffff:192.0.2.11')]).toEqual([
      true,
      true,
      false,
    ]);
    // The same mapped address in hexadecimal (192.0.2.10 is c000:020a), and mapped ones with a zone.
    expect([one.has('::ffff:c000:020a'), one.has('::ffff:c000:20b'), one.has('::ffff:192.0.2.10%eth0')]).toEqual([
      true,
      false,
      true,
    ]);
  });

  test('an IPv6 address that only ends in what looks like a mapped IPv4 one is not that IPv4 address', () => {
    const ten = addressSet(['10.0.0.0/8']);
    expect([
      ten.has('::ffff:10.0.0.1'),
      ten.has('2001:db8::ffff:10.0.0.1'),
      ten.has('64:ff9b::10.0.0.1'),
      ten.has('::10.0.0.1'),
    ]).toEqual([true, false, false, false]);
  });

  test('what is not an address is in no set, of either family, even one holding everything', () => {
    const everything = addressSet(['0.0.0.0/0', '::/0']);
    expect(everything.has('10.0.0.1')).toBe(true);
    expect(everything.has('2001:db8::1')).toBe(true);
    for (const a of ['', 'localhost', ' 10.0.0.1', '10.0.0.1\n', '1.2.3.4.5', '10.0.0.0/8', ':::1'])
      expect([a, everything.has(a)]).toEqual([a, false]);
  });

  test('prefix lengths up to 32 for IPv4 and 128 for IPv6, no longer; /0 is everything of its family', () => {
    expect(addressEntryProblem('10.0.0.0/32')).toBeNull();
    expect(addressEntryProblem('10.0.0.0/33')).toBe("'10.0.0.0/33' has a prefix longer than 32 bits");
    expect(addressEntryProblem('2001:db8::/128')).toBeNull();
    expect(addressEntryProblem('2001:db8::/129')).toBe("'2001:db8::/129' has a prefix longer than 128 bits");
    expect(addressEntryProblem('::/33')).toBeNull();
    const all4 = addressSet(['0.0.0.0/0']);
    expect([all4.has('8.8.8.8'), all4.has('2001:db8::1')]).toEqual([true, false]);
  });

  test('anything else is refused naming the entry, with examples; the set names the first bad one', () => {
    const refusal = (e: string) => `'${e}' is not an IP address or CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)`;
    for (const e of [
      'localhost',
      '10.0.0',
      '10.0.0.0/',
      '10.0.0.0/8/8',
      '/8',
      '10.0.0.0/x',
      '10.0.0.0/1234',
      ' 10.0.0.1',
      '10.0.0.1 ',
    ])
      expect([e, addressEntryProblem(e)]).toEqual([e, refusal(e)]);
    expect(() => addressSet(['10.0.0.0/8', 'proxy.local', 'also bad'])).toThrow(
      new AddressListError(refusal('proxy.local')),
    );
  });

  test('a list is split on commas, spaces around entries and empty entries dropped', () => {
    expect(splitList(' 10.0.0.0/8 ,, ::1 ,')).toEqual(['10.0.0.0/8', '::1']);
    expect(splitList('')).toEqual([]);
    expect(splitList('a b,c')).toEqual(['a b', 'c']);
  });
});
