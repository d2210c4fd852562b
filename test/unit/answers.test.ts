// Answers are written from the stored payload at lookup: for the transport and kind asked, the
// same each time, and following a record that changed.

import { Readable } from 'node:stream';
import { Accounts } from '../../src/accounts/accounts';
import { SAMPLE_FILE } from '../../src/app';
import { findOperation, OPERATIONS } from '../../src/contract/operations';
import { importFile, importStream } from '../../src/data/import';
import { LookupService } from '../../src/service/lookup';
import { SqliteStore } from '../../src/store/sqlite';
import { resultInner } from '../../src/transport/answers';
import { SAMPLE } from '../helpers/sample';

const LOCAL = { address: '127.0.0.1' };

function service(store: SqliteStore): LookupService {
  return new LookupService(store, new Accounts(store, { policy: 'any', rateLimit: 0 }));
}

function paramsOf(r: (typeof SAMPLE)[number]): Record<string, string> {
  const op = findOperation(r.operation)!;
  const p: Record<string, string> = { RegistrationNumber: r.registration, username: 'u' };
  if (op.state && r.state) p[op.state.param] = r.state;
  return p;
}

describe('answers written at lookup', () => {
  let store: SqliteStore;
  beforeAll(async () => {
    store = new SqliteStore(':memory:');
    expect((await importFile(store, SAMPLE_FILE)).committed).toBe(true);
  });
  afterAll(() => store.close());

  test('every sample record: asked twice, both transports, the answer is the same and holds its values', async () => {
    const ops = new Set<string>();
    for (const r of SAMPLE) {
      const op = findOperation(r.operation)!;
      const result = await service(store).lookup(op, paramsOf(r), LOCAL);
      const soap = resultInner(result, 'soap');
      const http = resultInner(result, 'http');
      expect(resultInner(result, 'soap')).toBe(soap);
      expect(resultInner(result, 'http')).toBe(http);
      // The SOAP form is compact, the HTTP form one element a line (README, "Calling").
      expect(soap).not.toContain('\r\n');
      expect(http).toMatch(/^\r\n {2}</);
      if (op.result === 'Vehicle') {
        expect(soap.startsWith('<vehicleJson>')).toBe(true);
        expect(http).toContain('\r\n  <vehicleData>');
      } else {
        expect(soap.startsWith('<Tests>')).toBe(true);
        expect(http).toContain('\r\n  <ExtendedInformationJson>');
      }
      ops.add(op.name);
    }
    // The sample holds a record for every operation, so every kind of answer was written.
    expect([...ops].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
  });

  test('the same payload is a different answer as a vehicle and as an MOT history', () => {
    const payload = '{"make":"FORD","Description":"X"}';
    const asVehicle = resultInner({ kind: 'Vehicle', payload }, 'soap');
    const asMot = resultInner({ kind: 'UKMOTData', payload }, 'soap');
    expect(asVehicle).toContain('<Description>X</Description>');
    expect(asMot).toContain('<Tests />');
    expect(resultInner({ kind: 'Vehicle', payload }, 'soap')).toBe(asVehicle);
    expect(resultInner({ kind: 'UKMOTData', payload }, 'soap')).toBe(asMot);
  });

  test('a record changed by an import is answered in its new form at once', async () => {
    const own = new SqliteStore(':memory:');
    const line = (d: string) =>
      JSON.stringify({ operation: 'Check', registration: 'CHG1', vehicle: { Description: d } }) + '\n';
    const ask = async () =>
      resultInner(
        await service(own).lookup(findOperation('Check')!, { RegistrationNumber: 'CHG1', username: 'u' }, LOCAL),
        'http',
      );
    expect((await importStream(own, Readable.from([line('FIRST')]))).committed).toBe(true);
    expect(await ask()).toContain('<Description>FIRST</Description>');
    expect((await importStream(own, Readable.from([line('SECOND')]))).committed).toBe(true);
    const again = await ask();
    expect(again).toContain('<Description>SECOND</Description>');
    expect(again).not.toContain('FIRST');
    await own.close();
  });

  test('text that needs escaping is escaped, every time', () => {
    const payload = JSON.stringify({ Description: 'A & B <c> "d"' });
    for (let i = 0; i < 2; i++) {
      const soap = resultInner({ kind: 'Vehicle', payload }, 'soap');
      expect(soap).toContain('<Description>A &amp; B &lt;c&gt; "d"</Description>');
      expect(
        soap.startsWith(
          `<vehicleJson>${payload.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</vehicleJson>`,
        ),
      ).toBe(true);
    }
  });

  test('a very long payload (an MOT history of many tests) is answered whole', () => {
    const tests = Array.from({ length: 200 }, (_, i) => ({
      TestDate: `2020-01-${String((i % 28) + 1).padStart(2, '0')}`,
      Result: 'Pass',
      Odometer: String(i * 1000),
      Advisories: ['Tyre worn close to the legal limit'],
    }));
    const payload = JSON.stringify({ make: 'FORD', model: 'FOCUS', tests });
    expect(payload.length).toBeGreaterThan(16 * 1024);
    const http = resultInner({ kind: 'UKMOTData', payload }, 'http');
    expect(http.split('<UKTest>').length - 1).toBe(200);
  });
});
