// A metered lookup on PostgreSQL without replicas reads its record and takes its charge in one
// statement (PostgresStore.chargeFound, src/store/store.ts): the record and the charge together,
// nothing charged when the record is not there, and the batch's grants in the order asked, with
// plain charges (a lookup answered upstream) in the same batch. Two stores stand in for two
// instances. Every expected value is written by hand here.

import { describePostgres, testSchema, type TestSchema } from '../helpers/postgres';
import { PostgresStore } from '../../src/store/postgres';
import type { RecordKey } from '../../src/store/store';

const DAY = '2026-03-01';
const FOCUS = '{"Description":"FORD FOCUS"}';
const CORSA = '{"Description":"VAUXHALL CORSA"}';
const key = (registration: string, operation = 'Check', state = ''): RecordKey => ({ operation, registration, state });

describePostgres('PostgresStore.chargeFound: a record and its charge in one statement', () => {
  let schema: TestSchema;
  let a: PostgresStore;
  let b: PostgresStore;

  beforeEach(async () => {
    schema = testSchema();
    a = new PostgresStore(schema.url);
    await a.migrate();
    b = new PostgresStore(schema.url);
    const batch = await a.beginImport();
    await batch.put({ ...key('RG11ABC'), payload: FOCUS });
    await batch.put({ ...key('CO22RSA'), payload: CORSA });
    await batch.put({ ...key('7ABC123', 'CheckUSA', 'CA'), payload: FOCUS });
    await batch.commit();
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await schema.drop();
  });

  test('found: the record comes with its charge, and the usage is counted with it', async () => {
    await a.accounts.addAccount({ username: 'payer', credits: 3 });
    expect(await a.chargeFound!(key('RG11ABC'), 'payer', DAY, 'Check')).toEqual({
      found: { payload: FOCUS },
      charge: { ok: true, credits: 2, usedToday: 1 },
    });
    expect(await a.chargeFound!(key('7ABC123', 'CheckUSA', 'CA'), 'payer', DAY, 'CheckUSA')).toEqual({
      found: { payload: FOCUS },
      charge: { ok: true, credits: 1, usedToday: 2 },
    });
    expect((await b.accounts.getAccount('payer'))?.credits).toBe(1);
    expect(await b.accounts.usage('payer', DAY)).toEqual([
      { username: 'payer', day: DAY, operation: 'Check', found: 1, notFound: 0 },
      { username: 'payer', day: DAY, operation: 'CheckUSA', found: 1, notFound: 0 },
    ]);
  });

  test('not found (another key, another state, another operation): nothing is charged or counted', async () => {
    await a.accounts.addAccount({ username: 'payer', credits: 3 });
    for (const k of [key('ZZ99ZZZ'), key('7ABC123', 'CheckUSA', 'NY'), key('RG11ABC', 'UKMOT')]) {
      expect(await a.chargeFound!(k, 'payer', DAY, k.operation)).toEqual({ found: null, charge: null });
    }
    expect((await b.accounts.getAccount('payer'))?.credits).toBe(3);
    expect(await b.accounts.usage('payer', DAY)).toEqual([]);
  });

  test("one turn's lookups and plain charges in one batch: granted in the order asked among those found; a refused one still brings its record", async () => {
    await a.accounts.addAccount({ username: 'fay', credits: 2 });
    const results = await Promise.all([
      a.chargeFound!(key('RG11ABC'), 'fay', DAY, 'Check'),
      a.chargeFound!(key('NOPE1'), 'fay', DAY, 'Check'),
      a.accounts.charge('fay', DAY, 'CheckUSA'),
      a.chargeFound!(key('CO22RSA'), 'fay', DAY, 'Check'),
      a.chargeFound!(key('NOPE2'), 'fay', DAY, 'Check'),
    ]);
    expect(results).toEqual([
      { found: { payload: FOCUS }, charge: { ok: true, credits: 1, usedToday: 1 } },
      { found: null, charge: null },
      { ok: true, credits: 0, usedToday: 2 },
      { found: { payload: CORSA }, charge: { ok: false, reason: 'credits' } },
      { found: null, charge: null },
    ]);
    expect(await b.accounts.usage('fay', DAY)).toEqual([
      { username: 'fay', day: DAY, operation: 'Check', found: 1, notFound: 0 },
      { username: 'fay', day: DAY, operation: 'CheckUSA', found: 1, notFound: 0 },
    ]);
  });

  test('the reasons as charge gives them: unknown, disabled, the daily limit (counted from 1 on a new day)', async () => {
    expect(await a.chargeFound!(key('RG11ABC'), 'nobody', DAY, 'Check')).toEqual({
      found: { payload: FOCUS },
      charge: { ok: false, reason: 'unknown' },
    });
    await a.accounts.addAccount({ username: 'off', credits: 5, enabled: false });
    expect(await a.chargeFound!(key('RG11ABC'), 'off', DAY, 'Check')).toEqual({
      found: { payload: FOCUS },
      charge: { ok: false, reason: 'disabled' },
    });
    await a.accounts.addAccount({ username: 'eve', dailyLimit: 1 });
    expect(await a.chargeFound!(key('RG11ABC'), 'eve', DAY, 'Check')).toEqual({
      found: { payload: FOCUS },
      charge: { ok: true, credits: null, usedToday: 1 },
    });
    expect(await b.chargeFound!(key('CO22RSA'), 'eve', DAY, 'Check')).toEqual({
      found: { payload: CORSA },
      charge: { ok: false, reason: 'daily' },
    });
    expect(await b.chargeFound!(key('CO22RSA'), 'eve', '2026-03-02', 'Check')).toEqual({
      found: { payload: CORSA },
      charge: { ok: true, credits: null, usedToday: 1 },
    });
    expect((await a.accounts.getAccount('off'))?.credits).toBe(5);
  });

  test('400 lookups from two stores at once, a quarter not found, against 150 credits: exactly 150 charged, each found one counted', async () => {
    await a.accounts.addAccount({ username: 'dee', credits: 150 });
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        (i % 2 ? a : b).chargeFound!(
          key(i % 4 === 3 ? `MISS${i}` : i % 4 === 1 ? 'CO22RSA' : 'RG11ABC'),
          'dee',
          DAY,
          'Check',
        ),
      ),
    );
    expect(results.filter((r) => r.found === null && r.charge === null)).toHaveLength(100);
    expect(results.filter((r) => r.charge?.ok === true)).toHaveLength(150);
    expect(results.filter((r) => r.charge?.ok === false && r.charge.reason === 'credits')).toHaveLength(150);
    expect((await a.accounts.getAccount('dee'))?.credits).toBe(0);
    expect(await a.accounts.usage('dee', DAY)).toEqual([
      { username: 'dee', day: DAY, operation: 'Check', found: 150, notFound: 0 },
    ]);
  });

  test('with a read replica configured, a record is read there: the store offers no one-step charge', () => {
    const withReplica = new PostgresStore(schema.url, { readUrls: [schema.url] });
    try {
      expect(withReplica.chargeFound).toBeUndefined();
      expect(a.chargeFound).toBeInstanceOf(Function);
    } finally {
      void withReplica.close();
    }
  });
});
