// The admin side of the store (src/store/admin.ts), on SQLite and PostgreSQL: audit entries pruned
// with usage after USAGE_DAYS; an Idempotency-Key kept at least 24 hours whatever USAGE_DAYS is.

import { openStore } from '../../src/store/open';
import { describeStores } from '../helpers/stores';

describeStores('%s', (kind) => {
  test('audit pruned before the day given; a key from yesterday evening still replays after a prune of today', async () => {
    const store = openStore(kind.url());
    try {
      await store.accounts.addAccount({ username: 'kept', credits: 0 });
      const entry = (at: string) => ({
        at,
        actor: 'ops',
        action: 'update',
        target: 'kept',
        before: { credits: 0 },
        after: { credits: 1 },
      });
      await store.admin.addAudit(entry('2026-05-01T23:59:59.000Z'));
      await store.admin.addAudit(entry('2026-05-02T00:00:00.000Z'));
      // USAGE_DAYS=1 on 2026-05-02: usage (and audit) before 2026-05-02 goes.
      const key = {
        username: 'kept',
        delta: 5,
        key: 'evening-top-up',
        fingerprint: 'f1',
        actor: 'billing',
        at: '2026-05-01T22:00:00.000Z',
      };
      expect(await store.admin.creditOnce(key)).toEqual({ result: { balance: 5 }, replayed: false });
      await store.admin.prune('2026-05-02');
      const left = await store.admin.audit(0, 10);
      expect(left.map((e) => e.at)).toEqual(['2026-05-02T00:00:00.000Z']);
      expect(await store.admin.creditOnce(key)).toEqual({ result: { balance: 5 }, replayed: true });
      expect(await store.admin.creditOnce({ ...key, fingerprint: 'f2' })).toBe('conflict');
      // Two days on, the key is gone: a new top-up with it applies.
      await store.admin.prune('2026-05-03');
      expect(await store.admin.creditOnce(key)).toEqual({ result: { balance: 10 }, replayed: false });
    } finally {
      await store.close();
    }
  });
});
