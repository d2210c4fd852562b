// A fetched answer whose cache write fails (issue 43, point 6): it was paid for, so it is served and
// charged all the same; one error line says the cache cannot be written, reglookup_store_up is 0
// and /readyz says the store is degraded until a cache write succeeds again (one info line).
// Each store's cache write is made to throw as that store fails on a full disk.

import { createHash } from 'node:crypto';
import { openStore } from '../../src/store/open';
import type { VehicleStore } from '../../src/store/store';
import { startServer, type TestServer } from '../helpers/server';
import { describeStores } from '../helpers/stores';
import { DVLA_TEST_KEY, startFakeDvla, type FakeDvla } from '../helpers/upstream-dvla';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

describeStores('a fetched answer whose cache write fails (%s)', (kind) => {
  let dvla: FakeDvla;
  let svc: TestServer;
  let store: VehicleStore;
  let failing = true;
  let out = '';
  let writeSpy: jest.SpyInstance;

  beforeAll(async () => {
    writeSpy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      return true;
    });
    dvla = await startFakeDvla();
    const url = kind.url();
    store = openStore(url);
    const put = store.cachePut.bind(store);
    store.cachePut = async (e) => {
      if (!failing) return put(e);
      throw kind.name === 'sqlite'
        ? Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
        : Object.assign(new Error('could not extend file "base/16384/16385": No space left on device'), {
            code: '53100',
          });
    };
    svc = await startServer(
      {
        DATABASE_URL: url,
        PROVIDERS: 'dvla',
        DVLA_URL: dvla.url,
        DVLA_API_KEY: DVLA_TEST_KEY,
        USERNAME_POLICY: 'registered',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      },
      { store, sample: false },
    );
    await store.accounts.putAccount({ username: key('payer'), credits: 10 });
  });
  afterAll(async () => {
    await svc.close();
    await dvla.close();
    writeSpy.mockRestore();
  });

  const get = (reg: string) => fetch(`${svc.url}/api/reg.asmx/Check?RegistrationNumber=${reg}&username=payer`);
  const credits = async () => (await store.accounts.getAccount(key('payer')))?.credits;
  const storeUp = async () => /^reglookup_store_up (\d)$/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1];
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; message: string; error?: string });

  test('served and charged while the cache cannot be written; the store degraded; back when a write succeeds', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get('AA19AAA');
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('FORD 2000cc');
    }
    // Two answers, two credits; nothing cached, so each was fetched.
    expect(await credits()).toBe(8);
    expect(dvla.calls.get('AA19AAA')).toBe(2);

    const down = lines().filter((l) => l.message.startsWith('store cannot cache upstream answers'));
    expect(down).toHaveLength(1);
    expect(down[0].level).toBe('error');
    expect(down[0].error).toMatch(kind.name === 'sqlite' ? /disk is full/ : /No space left on device/);
    expect(await storeUp()).toBe('0');
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; checks: Record<string, string>; degraded?: string };
    expect(body.status).toBe('ready');
    expect(body.checks.store).toBe('degraded');
    expect(body.degraded).toMatch(/^store: fetched upstream answers cannot be cached/);

    failing = false;
    expect((await get('AA19EEE')).status).toBe(200);
    expect(await credits()).toBe(7);
    expect(await storeUp()).toBe('1');
    const again = (await (await fetch(`${svc.url}/readyz`)).json()) as { checks: Record<string, string> };
    expect(again.checks.store).toBe('ok');
    expect(lines().filter((l) => /^store caches upstream answers again after \d+\.\d s$/.test(l.message))).toHaveLength(
      1,
    );
    // Cached now: the next lookup is answered without the DVLA.
    expect((await get('AA19EEE')).status).toBe(200);
    expect(dvla.calls.get('AA19EEE')).toBe(1);
    expect(out).not.toMatch(/\n\s+at /);
  });
});
