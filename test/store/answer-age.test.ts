// The age of an imported record's answer, on every store (docs/calling.md, "The age of an answer";
// docs/data.md, "When a record is as of"): vehicleJson's AnswerSource and AnswerAsOf, GET's and the
// JSON API's Last-Modified (RFC 9110's IMF-fixdate), no Age; and the import time an operation keeps
// across refreshes and imports that add to it. Expected times are written out by hand.

import { Readable } from 'node:stream';
import { importStream, type ImportOptions } from '../../src/data/import';
import type { VehicleStore } from '../../src/store/store';
import { call, fetchAnswer } from '../helpers/call';
import { startServer, type TestServer } from '../helpers/server';
import { describeStores, open } from '../helpers/stores';

jest.setTimeout(60_000);

/** 15 October 2026, 06:30:00 UTC: a register file's extraction time. */
const OCT_15 = Date.UTC(2026, 9, 15, 6, 30, 0);
/** 1 November 2026, 00:00:00 UTC: a later one. */
const NOV_1 = Date.UTC(2026, 10, 1, 0, 0, 0);

const check = (reg: string, description: string) =>
  JSON.stringify({ operation: 'Check', registration: reg, vehicle: { Description: description, Colour: 'RED' } });
const usa = (reg: string) =>
  JSON.stringify({ operation: 'CheckUSA', registration: reg, state: 'CA', vehicle: { Description: 'US CAR' } });
const run = (store: VehicleStore, options: ImportOptions, ...lines: string[]) =>
  importStream(store, Readable.from([lines.join('\n') + '\n']), options);

describeStores('%s store: an imported record says its import time', (kind) => {
  let store: VehicleStore;
  let srv: TestServer | null = null;
  beforeEach(() => {
    store = open(kind.url());
  });
  afterEach(async () => {
    if (srv) await srv.close();
    else await store.close();
    srv = null;
  });
  const serve = async () => {
    srv = await startServer({}, { store, sample: false });
    return srv;
  };

  test('GET, JSON and SOAP: source import, as of the time the import was given; Last-Modified, no Age', async () => {
    await run(store, { asOf: OCT_15 }, check('AGE1', 'FORD FOCUS'));
    const s = await serve();
    const get = await call(s.url, 'get', 'Check', { RegistrationNumber: 'AGE1', username: 'demo' });
    expect(get.status).toBe(200);
    expect(get.headers.get('last-modified')).toBe('Thu, 15 Oct 2026 06:30:00 GMT');
    expect(get.headers.get('age')).toBeNull();
    // A paid answer is not for a shared cache to keep (RFC 9111: Last-Modified alone allows it).
    expect(get.headers.get('cache-control')).toBe('no-store');
    expect(get.body).toContain(
      '<vehicleJson>{"Description":"FORD FOCUS","Colour":"RED","AnswerSource":"import","AnswerAsOf":"2026-10-15T06:30:00Z"}</vehicleJson>',
    );

    const json = await fetchAnswer(s.url, '/api/json.aspx/Check/AGE1?username=demo');
    expect(json.headers.get('last-modified')).toBe('Thu, 15 Oct 2026 06:30:00 GMT');
    expect(json.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(json.body)).toEqual({
      Description: 'FORD FOCUS',
      Colour: 'RED',
      AnswerSource: 'import',
      AnswerAsOf: '2026-10-15T06:30:00Z',
    });

    // SOAP carries it in vehicleJson only.
    const soap = await call(s.url, 'soap11', 'Check', { RegistrationNumber: 'AGE1', username: 'demo' });
    expect(soap.body).toContain('"AnswerSource":"import","AnswerAsOf":"2026-10-15T06:30:00Z"}</vehicleJson>');
    expect(soap.headers.get('last-modified')).toBeNull();
  });

  test('an import given no time is as of the import itself', async () => {
    const before = Date.now();
    await run(store, {}, check('AGE2', 'VAUXHALL CORSA'));
    const after = Date.now();
    const s = await serve();
    const get = await call(s.url, 'get', 'Check', { RegistrationNumber: 'AGE2', username: 'demo' });
    const at = Date.parse(get.headers.get('last-modified') ?? '');
    // Last-Modified has whole seconds.
    expect(at).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(at).toBeLessThanOrEqual(after);
  });

  test('a refresh (--replace) makes its operation as of the new file; another operation keeps its own', async () => {
    await run(store, { asOf: OCT_15 }, check('AGE3', 'OLD'), usa('7AGE123'));
    await run(store, { asOf: NOV_1, replace: 'named' }, check('AGE3', 'NEW'));
    expect(await store.importTimes?.()).toEqual(
      new Map([
        ['Check', NOV_1],
        ['CheckUSA', OCT_15],
      ]),
    );
  });

  test('an import adding to an operation leaves it as of the older of the two: its other records are that old', async () => {
    await run(store, { asOf: OCT_15 }, check('AGE4', 'FIRST'));
    await run(store, { asOf: NOV_1 }, check('AGE5', 'SECOND'));
    expect((await store.importTimes?.())?.get('Check')).toBe(OCT_15);
    // Replaced as a whole, it is as of the newer file again.
    await run(store, { asOf: NOV_1, replace: 'all' }, check('AGE4', 'FIRST'), check('AGE5', 'SECOND'));
    expect(await store.importTimes?.()).toEqual(new Map([['Check', NOV_1]]));
  });

  test('--replace-all drops the time of an operation the file no longer holds', async () => {
    await run(store, { asOf: OCT_15 }, check('AGE6', 'CAR'), usa('7AGE124'));
    await run(store, { asOf: NOV_1, replace: 'all' }, check('AGE6', 'CAR'));
    expect(await store.importTimes?.()).toEqual(new Map([['Check', NOV_1]]));
  });

  test('a dry run writes no time', async () => {
    await run(store, { asOf: OCT_15 }, check('AGE7', 'CAR'));
    await run(store, { asOf: NOV_1, dryRun: true, replace: 'all' }, check('AGE7', 'CAR'));
    expect((await store.importTimes?.())?.get('Check')).toBe(OCT_15);
  });
});
