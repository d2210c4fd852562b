// Answers prepared when records are written must be exactly the answers built per request, must
// follow the record when it is replaced, and must never be served when another version made them.

import fs from 'node:fs';
import Database from 'better-sqlite3';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Accounts } from '../../src/accounts/accounts';
import { SAMPLE_FILE } from '../../src/app';
import { findOperation, OPERATIONS } from '../../src/contract/operations';
import { LookupService, type LookupResult } from '../../src/service/lookup';
import { importFile, importStream } from '../../src/store/import';
import { SqliteStore } from '../../src/store/sqlite';
import type { PreparedForms } from '../../src/store/store';
import { FORM_HTTP, FORM_SOAP, PREPARED_FORMS } from '../../src/transport/prepared';
import { httpResultInner, soapResultInner } from '../../src/transport/xml';
import { SAMPLE } from '../helpers/sample';
import { startServer } from '../helpers/server';

const key = (operation: string, registration: string, state = '') => ({ operation, registration, state });

function service(store: SqliteStore): LookupService {
  return new LookupService(store, new Accounts(store, { policy: 'any', ratePerMinute: 0 }));
}

function paramsOf(r: (typeof SAMPLE)[number]): Record<string, string> {
  const op = findOperation(r.operation)!;
  const p: Record<string, string> = { RegistrationNumber: r.registration, username: 'u' };
  if (op.state && r.state) p[op.state.param] = r.state;
  return p;
}

describe('prepared answers', () => {
  let prepared: SqliteStore;
  let plain: SqliteStore;
  beforeAll(async () => {
    prepared = new SqliteStore(':memory:');
    plain = new SqliteStore(':memory:');
    expect((await importFile(prepared, SAMPLE_FILE, PREPARED_FORMS)).committed).toBe(true);
    expect((await importFile(plain, SAMPLE_FILE)).committed).toBe(true);
  });
  afterAll(async () => {
    await prepared.close();
    await plain.close();
  });

  test('an import into an empty store prepares every record and records the version', async () => {
    expect(await prepared.preparedVersion()).toBe(PREPARED_FORMS.version);
    expect(await plain.preparedVersion()).toBeNull();
  });

  test('for every sample record, the prepared SOAP and HTTP answers are the ones built per request', async () => {
    const fast = service(prepared);
    const slow = service(plain);
    const ops = new Set<string>();
    for (const r of SAMPLE) {
      const op = findOperation(r.operation)!;
      for (const [form, render] of [
        [FORM_SOAP, soapResultInner],
        [FORM_HTTP, httpResultInner],
      ] as const) {
        const a: LookupResult = await fast.lookup(op, paramsOf(r), form);
        const b: LookupResult = await slow.lookup(op, paramsOf(r), form);
        expect('prepared' in a).toBe(true);
        expect('nodes' in b).toBe(true);
        if ('prepared' in a && 'nodes' in b) expect(a.prepared).toBe(render(b.nodes));
      }
      ops.add(op.name);
    }
    // The sample holds a record for every operation, so every kind of answer was compared.
    expect([...ops].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
  });

  test("UKMOT's Model filter reads the record, and still refuses a model that does not match", async () => {
    const r = SAMPLE.find((s) => s.operation === 'UKMOT')!;
    const op = findOperation('UKMOT')!;
    const ok = await service(prepared).lookup(op, { ...paramsOf(r), Model: String(r.mot?.make ?? '') }, FORM_SOAP);
    expect('nodes' in ok).toBe(true);
    await expect(service(prepared).lookup(op, { ...paramsOf(r), Model: 'NO SUCH MODEL' }, FORM_SOAP)).rejects.toMatchObject({ code: 'VEHICLE_NOT_FOUND' });
  });
});

describe('prepared answers in the store', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('each form is kept under its number; replacing a record drops forms it no longer has', async () => {
    let batch = await store.beginImport();
    await batch.put({ ...key('Check', 'A1'), payload: '{"n":1}', prepared: ['soap-1', 'http-1'] });
    await batch.put({ ...key('Check', 'A2'), payload: '{"n":2}', prepared: ['soap-2', 'http-2'] });
    await batch.commit('v1');
    expect(await store.getPrepared(key('Check', 'A1'), 0)).toBe('soap-1');
    expect(await store.getPrepared(key('Check', 'A1'), 1)).toBe('http-1');
    expect(await store.getPrepared(key('Check', 'A1'), 2)).toBeNull();
    expect(await store.getPrepared(key('Check', 'A3'), 0)).toBeNull();
    expect(await store.preparedVersion()).toBe('v1');

    batch = await store.beginImport();
    await batch.put({ ...key('Check', 'A1'), payload: '{"n":3}' });
    await batch.commit();
    expect(await store.get(key('Check', 'A1'))).toBe('{"n":3}');
    expect(await store.getPrepared(key('Check', 'A1'), 0)).toBeNull();
    expect(await store.getPrepared(key('Check', 'A2'), 0)).toBe('soap-2');
  });

  test('prepareAll makes every record\'s forms anew under the new version', async () => {
    const batch = await store.beginImport();
    for (let i = 0; i < 2500; i++) await batch.put({ ...key('Check', `R${i}`), payload: `{"i":${i}}`, prepared: ['old'] });
    await batch.commit('v1');
    const forms: PreparedForms = { version: 'v2', make: (op, payload) => [`${op}:${payload}`, 'second'] };
    expect(await store.prepareAll(forms)).toBe(2500);
    expect(await store.preparedVersion()).toBe('v2');
    expect(await store.getPrepared(key('Check', 'R0'), 0)).toBe('Check:{"i":0}');
    expect(await store.getPrepared(key('Check', 'R2499'), 0)).toBe('Check:{"i":2499}');
    expect(await store.getPrepared(key('Check', 'R1234'), 1)).toBe('second');
  });

  test('an import into a store prepared under another version prepares all of it again', async () => {
    const batch = await store.beginImport();
    await batch.put({ ...key('Check', 'OLD1'), payload: '{"Description":"OLD"}', prepared: ['stale', 'stale'] });
    await batch.commit('an earlier version');
    const line = JSON.stringify({ operation: 'Check', registration: 'NEW1', vehicle: { Description: 'NEW' } });
    expect((await importStream(store, Readable.from([line + '\n']), PREPARED_FORMS)).committed).toBe(true);
    expect(await store.preparedVersion()).toBe(PREPARED_FORMS.version);
    expect(await store.getPrepared(key('Check', 'OLD1'), FORM_SOAP)).toContain('<Description>OLD</Description>');
    expect(await store.getPrepared(key('Check', 'NEW1'), FORM_HTTP)).toContain('<Description>NEW</Description>');
  });

  test('reading a prepared form is two index probes, not a scan', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-prepared-'));
    const file = path.join(dir, 'plan.db');
    await new SqliteStore(file).close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = (
        db
          .prepare('EXPLAIN QUERY PLAN SELECT p.body FROM records r JOIN prepared p ON p.id = r.id * 8 + ? WHERE r.operation = ? AND r.registration = ? AND r.state = ?')
          .all(0, 'Check', 'A1', '') as { detail: string }[]
      ).map((p) => p.detail);
      expect(plan).toEqual(['SEARCH r USING COVERING INDEX records_key (operation=? AND registration=? AND state=?)', 'SEARCH p USING INTEGER PRIMARY KEY (rowid=?)']);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('answers prepared by another version are made anew at start-up, never served', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-stale-'));
  const file = path.join(dir, 'stale.db');
  const store = new SqliteStore(file);
  const batch = await store.beginImport();
  const vehicle = { Description: 'FRESH & CURRENT', RegistrationYear: 2020 };
  await batch.put({ ...key('Check', 'STALE1'), payload: JSON.stringify(vehicle), prepared: ['<vehicleJson>STALE</vehicleJson>', '<vehicleJson>STALE</vehicleJson>'] });
  await batch.commit('an earlier version');
  const server = await startServer({ DATABASE_URL: `sqlite:${file}` }, { sample: false, store });
  try {
    const get = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=STALE1&username=u`);
    const text = await get.text();
    expect(get.status).toBe(200);
    expect(text).not.toContain('STALE<');
    expect(text).toContain('<Description>FRESH &amp; CURRENT</Description>');
    const soap = await fetch(`${server.url}/api/reg.asmx`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"http://regcheck.org.uk/Check"' },
      body: '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Check xmlns="http://regcheck.org.uk"><RegistrationNumber>STALE1</RegistrationNumber><username>u</username></Check></soap:Body></soap:Envelope>',
    });
    const xml = await soap.text();
    expect(soap.status).toBe(200);
    expect(xml).toContain('<Description>FRESH &amp; CURRENT</Description>');
    expect(await store.preparedVersion()).toBe(PREPARED_FORMS.version);
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
