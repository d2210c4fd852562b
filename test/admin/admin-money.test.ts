// Money-safe writes (issue 27, 2): 50 concurrent top-ups, each sent twice with its Idempotency-Key,
// and 500 concurrent lookups charged to the same metered caller leave the exact sum, on SQLite and
// on PostgreSQL: final balance = start + 50 top-ups - the lookups answered with a record.

import { createHash } from 'node:crypto';
import { openStore } from '../../src/store/open';
import { callJson } from '../helpers/json';
import { demo } from '../helpers/sample';
import { startServer } from '../helpers/server';
import { client, startAdmin, TOKENS } from '../helpers/admin';
import { describeStores } from '../helpers/stores';

/** The store's key of a username (docs/security.md): SHA-256 of its UTF-8, in hex. */
const key = (username: string) => createHash('sha256').update(username, 'utf8').digest('hex');

describeStores('%s', (kind) => {
  test('50 top-ups (each retried) and 500 lookups at once leave the exact sum', async () => {
    const url = kind.url();
    const store = openStore(url);
    const server = await startServer({ DATABASE_URL: url }, { store });
    const admin = await startAdmin(store);
    try {
      const ops = client(admin.url, TOKENS[1].token);
      expect(
        (await ops('POST', '/admin/api/users', { name: 'metered', username: 'metered', credits: 100 })).status,
      ).toBe(201);
      const plate = demo('Check').registration;
      const topUps = Array.from({ length: 50 }, (_, i) => ({ 'Idempotency-Key': `top-up-${kind.name}-${i}-0123` }));
      const calls = [
        ...topUps.flatMap((key) => [
          ops('POST', '/admin/api/users/metered/credits', { amount: 10 }, key),
          ops('POST', '/admin/api/users/metered/credits', { amount: 10 }, key),
        ]),
        ...Array.from({ length: 500 }, () =>
          callJson(server.url, 'Check', { RegistrationNumber: plate, username: 'metered' }),
        ),
      ];
      const answers = await Promise.all(calls);
      const credits = answers.slice(0, 100) as Awaited<ReturnType<typeof ops>>[];
      const lookups = answers.slice(100) as Awaited<ReturnType<typeof callJson>>[];
      expect(credits.every((a) => a.status === 200)).toBe(true);
      // Each key applied exactly once: one answer of each pair applied, the other replayed.
      for (let i = 0; i < 50; i++)
        expect([credits[2 * i].json.replayed, credits[2 * i + 1].json.replayed].sort()).toEqual([false, true]);
      const found = lookups.filter((a) => a.status === 200).length;
      const outOfCredit = lookups.filter((a) => JSON.parse(a.body).code === 'OUT_OF_CREDIT').length;
      expect(found + outOfCredit).toBe(500);
      expect((await store.accounts.getAccount(key('metered')))?.credits).toBe(100 + 50 * 10 - found);
      const audit = await ops('GET', '/admin/api/audit?limit=1000');
      expect((audit.json.entries as { action: string }[]).filter((e) => e.action === 'credit')).toHaveLength(50);
    } finally {
      await admin.close();
      await server.close();
    }
  });
});
