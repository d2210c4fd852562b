// How a log line names a caller (docs/operating.md, Logs): `sha256:` and the first 12 hex
// characters of SHA-256 of the username, `-` without one. The expected values were computed with
// `printf NAME | sha256sum`, not with the code under test.

import { loggedPath } from '../../src/admin/server';
import { fingerprint } from '../../src/ops/fingerprint';

test('a fingerprint is sha256: and the first 12 hex characters of SHA-256 of the UTF-8 username', () => {
  expect(fingerprint('demo')).toBe('sha256:2a97516c354b');
  expect(fingerprint('é漢')).toBe('sha256:3ba0cfb6375e');
  expect(fingerprint('x y')).toBe('sha256:887fcea6a803');
});

test('no username given: -', () => {
  expect(fingerprint(undefined)).toBe('-');
  expect(fingerprint(null)).toBe('-');
  expect(fingerprint('')).toBe('-');
});

test('an admin path names the username by its fingerprint, decoded first; other paths as they are', () => {
  expect(loggedPath('/admin/api/users/demo')).toBe('/admin/api/users/sha256:2a97516c354b');
  expect(loggedPath('/admin/api/users/a%2Fb/credits?x=1')).toBe('/admin/api/users/sha256:c14cddc033f6/credits');
  expect(loggedPath('/admin/api/users/x%20y/usage')).toBe('/admin/api/users/sha256:887fcea6a803/usage');
  expect(loggedPath('/admin/api/users?search=demo')).toBe('/admin/api/users');
  expect(loggedPath('/admin/api/overview')).toBe('/admin/api/overview');
  expect(loggedPath('/admin/api/users/%E0%A4%A')).not.toContain('%E0%A4%A');
});

test('the same username always has the same fingerprint, however many others came between', () => {
  expect(fingerprint('demo')).toBe('sha256:2a97516c354b');
  for (let i = 0; i < 10_000; i++) fingerprint(`caller-${i}`);
  expect(fingerprint('demo')).toBe('sha256:2a97516c354b');
  expect(fingerprint('x y')).toBe('sha256:887fcea6a803');
});
