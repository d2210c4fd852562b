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
import { LookupService } from '../../src/service/lookup';
import { resultNodes } from '../../src/service/records';
import { importFile, importStream } from '../../src/data/import';
import { SqliteStore } from '../../src/store/sqlite';
import type { PreparedForms } from '../../src/store/store';
import { PREPARED_FORMS, resultInner } from '../../src/transport/prepared';
import { httpResultInner, soapResultInner } from '../../src/transport/xml';
import { SAMPLE } from '../helpers/sample';
import { startServer } from '../helpers/server';

const LOCAL = { address: '127.0.0.1' };
const key = (operation: string, registration: string, state = '') => ({ operation, registration, state });

function service(store: SqliteStore): LookupService {
  return new LookupService(store, new Accounts(store, { policy: 'any', rateLimit: 0 }));
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
    expect((await importFile(prepared, SAMPLE_FILE, { forms: PREPARED_FORMS })).committed).toBe(true);
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
      const a = await fast.lookup(op, paramsOf(r), LOCAL);
      const b = await slow.lookup(op, paramsOf(r), LOCAL);
      expect(a.prepared).not.toBeNull();
      expect(b.prepared).toBeNull();
      const nodes = resultNodes(op.result, b.payload);
      expect(resultInner(a, 'soap')).toBe(soapResultInner(nodes));
      expect(resultInner(a, 'http')).toBe(httpResultInner(nodes));
      expect(resultInner(b, 'soap')).toBe(soapResultInner(nodes));
      ops.add(op.name);
    }
    // The sample holds a record for every operation, so every kind of answer was compared.
    expect([...ops].sort()).toEqual(OPERATIONS.map((o) => o.name).sort());
  });

  test('text that needs escaping is escaped in the prepared answer too', async () => {
    const r = SAMPLE.find((s) => s.operation === 'Check' && /[&<>]/.test(JSON.stringify(s.vehicle)))!;
    const a = await service(prepared).lookup(findOperation('Check')!, paramsOf(r), LOCAL);
    expect(a.prepared).not.toBeNull();
    const soap = resultInner(a, 'soap');
    expect(soap).toMatch(/&amp;|&lt;|&gt;/);
    expect(soap).not.toMatch(/[\u0000-\u0008]/);
    expect(soap.startsWith(`<vehicleJson>${a.payload.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</vehicleJson>`)).toBe(true);
  });

  test("UKMOT's Model filter still refuses a model that does not match", async () => {
    const r = SAMPLE.find((s) => s.operation === 'UKMOT')!;
    const op = findOperation('UKMOT')!;
    const ok = await service(prepared).lookup(op, { ...paramsOf(r), Model: String(r.mot?.make ?? '') }, LOCAL);
    expect(ok.prepared).not.toBeNull();
    await expect(service(prepared).lookup(op, { ...paramsOf(r), Model: 'NO SUCH MODEL' }, LOCAL)).rejects.toMatchObject({ code: 'VEHICLE_NOT_FOUND' });
  });
});

describe('prepared answers in the store', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  test('a record keeps the answers written with it; replacing it without answers drops them', async () => {
    let batch = await store.beginImport();
    await batch.put({ ...key('Check', 'A1'), payload: '{"n":1}', prepared: 'answers-1' });
    await batch.put({ ...key('Check', 'A2'), payload: '{"n":2}', prepared: 'answers-2' });
    await batch.commit('v1');
    expect(await store.get(key('Check', 'A1'))).toEqual({ payload: '{"n":1}', prepared: 'answers-1' });
    expect(await store.get(key('Check', 'A3'))).toBeNull();
    expect(await store.preparedVersion()).toBe('v1');

    batch = await store.beginImport();
    await batch.put({ ...key('Check', 'A1'), payload: '{"n":3}' });
    await batch.commit();
    expect(await store.get(key('Check', 'A1'))).toEqual({ payload: '{"n":3}', prepared: null });
    expect(await store.get(key('Check', 'A2'))).toEqual({ payload: '{"n":2}', prepared: 'answers-2' });
  });

  test("prepareAll makes every record's answers anew under the new version", async () => {
    const batch = await store.beginImport();
    for (let i = 0; i < 2500; i++) await batch.put({ ...key('Check', `R${i}`), payload: `{"i":${i}}`, prepared: 'old' });
    await batch.commit('v1');
    const forms: PreparedForms = { version: 'v2', make: (op, payload) => (payload === '{"i":7}' ? null : `${op}:${payload}`) };
    expect(await store.prepareAll(forms)).toBe(2500);
    expect(await store.preparedVersion()).toBe('v2');
    expect((await store.get(key('Check', 'R0')))?.prepared).toBe('Check:{"i":0}');
    expect((await store.get(key('Check', 'R2499')))?.prepared).toBe('Check:{"i":2499}');
    expect((await store.get(key('Check', 'R7')))?.prepared).toBeNull();
  });

  test('an import into a store prepared under another version prepares all of it again', async () => {
    const batch = await store.beginImport();
    await batch.put({ ...key('Check', 'OLD1'), payload: '{"Description":"OLD"}', prepared: 'stale\u0001stale' });
    await batch.commit('an earlier version');
    const line = JSON.stringify({ operation: 'Check', registration: 'NEW1', vehicle: { Description: 'NEW' } });
    expect((await importStream(store, Readable.from([line + '\n']), { forms: PREPARED_FORMS })).committed).toBe(true);
    expect(await store.preparedVersion()).toBe(PREPARED_FORMS.version);
    const old = (await store.get(key('Check', 'OLD1')))!;
    expect(resultInner({ kind: 'Vehicle', ...old }, 'soap')).toContain('<Description>OLD</Description>');
    expect(old.prepared).not.toContain('stale');
    const fresh = (await store.get(key('Check', 'NEW1')))!;
    expect(fresh.prepared).not.toBeNull();
    expect(resultInner({ kind: 'Vehicle', ...fresh }, 'http')).toContain('<Description>NEW</Description>');
  });
});

test("a payload changed by a writer that knows nothing of prepared answers drops them; start-up makes them again", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-foreign-'));
  const file = path.join(dir, 'foreign.db');
  const store = new SqliteStore(file);
  const line = JSON.stringify({ operation: 'Check', registration: 'FOREIGN1', vehicle: { Description: 'FIRST' } });
  expect((await importStream(store, Readable.from([line + '\n']), { forms: PREPARED_FORMS })).committed).toBe(true);
  expect((await store.get(key('Check', 'FOREIGN1')))?.prepared).toContain('FIRST');
  // What the previous release's import does: an upsert of the payload alone.
  const db = new Database(file);
  db.prepare('INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?) ON CONFLICT (operation, registration, state) DO UPDATE SET payload = excluded.payload')
    .run('Check', 'FOREIGN1', '', JSON.stringify({ Description: 'SECOND' }));
  db.close();
  // Lookups in one turn of the event loop share a snapshot (sqlite.ts); the next turn sees the write.
  await new Promise((resolve) => setImmediate(resolve));
  expect(await store.get(key('Check', 'FOREIGN1'))).toEqual({ payload: '{"Description":"SECOND"}', prepared: null });
  const server = await startServer({ DATABASE_URL: `sqlite:${file}` }, { sample: false, store });
  try {
    const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=FOREIGN1&username=u`);
    const text = await res.text();
    expect(text).toContain('<Description>SECOND</Description>');
    expect(text).not.toContain('FIRST');
    expect((await store.get(key('Check', 'FOREIGN1')))?.prepared).toContain('SECOND');
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('re-importing a record whose answers come out the same (a change only vehicleJson shows) keeps them prepared', async () => {
  const store = new SqliteStore(':memory:');
  const rec = (colour: string) => JSON.stringify({ operation: 'Check', registration: 'SAME1', vehicle: { Description: 'CAR', Colour: colour } }) + '\n';
  expect((await importStream(store, Readable.from([rec('Red')]), { forms: PREPARED_FORMS })).committed).toBe(true);
  const first = (await store.get(key('Check', 'SAME1')))!;
  expect((await importStream(store, Readable.from([rec('Blue')]), { forms: PREPARED_FORMS })).committed).toBe(true);
  const second = (await store.get(key('Check', 'SAME1')))!;
  expect(second.prepared).not.toBeNull();
  expect(second.prepared).toBe(first.prepared);
  expect(resultInner({ kind: 'Vehicle', ...second }, 'soap')).toContain('"Colour":"Blue"');
  await store.close();
});

test('a value that would not survive the SOAP form being derived from the stored one is answered by building', async () => {
  const store = new SqliteStore(':memory:');
  // A line break and spaces just before a closing tag look like indentation to the derivation.
  const vehicle = { Description: 'ends with a break\r\n  ', CarModel: 'fine' };
  const line = JSON.stringify({ operation: 'Check', registration: 'EDGE1', vehicle }) + '\n';
  expect((await importStream(store, Readable.from([line]), { forms: PREPARED_FORMS })).committed).toBe(true);
  const found = (await store.get(key('Check', 'EDGE1')))!;
  expect(found.prepared).toBeNull();
  const result = await service(store).lookup(findOperation('Check')!, { RegistrationNumber: 'EDGE1', username: 'u' }, LOCAL);
  expect(resultInner(result, 'soap')).toContain('<Description>ends with a break\r\n  </Description>');
  expect(resultInner(result, 'http')).toContain('<Description>ends with a break\r\n  </Description>');
  await store.close();
});

test('a store written before answers were prepared is opened, and prepared at start-up', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-old-'));
  const file = path.join(dir, 'old.db');
  const db = new Database(file);
  db.exec(`CREATE TABLE records (id INTEGER PRIMARY KEY, operation TEXT NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL);
    CREATE UNIQUE INDEX records_key ON records (operation, registration, state);`);
  db.prepare('INSERT INTO records (operation, registration, state, payload) VALUES (?, ?, ?, ?)').run('Check', 'OLDSTORE1', '', JSON.stringify({ Description: 'FROM AN OLD STORE' }));
  db.close();
  const store = new SqliteStore(file);
  expect(await store.get(key('Check', 'OLDSTORE1'))).toEqual({ payload: '{"Description":"FROM AN OLD STORE"}', prepared: null });
  const server = await startServer({ DATABASE_URL: `sqlite:${file}` }, { sample: false, store });
  try {
    const res = await fetch(`${server.url}/api/reg.asmx/Check?RegistrationNumber=OLDSTORE1&username=u`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<Description>FROM AN OLD STORE</Description>');
    expect(await store.preparedVersion()).toBe(PREPARED_FORMS.version);
    expect((await store.get(key('Check', 'OLDSTORE1')))?.prepared).not.toBeNull();
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('answers prepared by another version are made anew at start-up, never served', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-stale-'));
  const file = path.join(dir, 'stale.db');
  const store = new SqliteStore(file);
  const batch = await store.beginImport();
  const vehicle = { Description: 'FRESH & CURRENT', RegistrationYear: 2020 };
  await batch.put({ ...key('Check', 'STALE1'), payload: JSON.stringify(vehicle), prepared: '<vehicleJson>STALE</vehicleJson>\u0001<vehicleJson>STALE</vehicleJson>' });
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
