// Which PostgreSQL failures mean "the server cannot be reached" (the caller is told to retry:
// SERVICE_UNAVAILABLE) and which mean a statement failed (INTERNAL_ERROR). The cases are the errors
// pg and Node raise, written out by hand from their documentation (PostgreSQL Appendix A, Node's
// net errors, pg-pool's messages); the end-to-end case is test/faults/postgres-outage.test.ts.

import { isUnreachable } from '../../src/store/postgres';
import { StoreUnavailableError } from '../../src/store/store';
import { asLookupError } from '../../src/service/errors';

const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

test.each([
  ['connection refused', err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
  ['connection reset', err('read ECONNRESET', 'ECONNRESET')],
  ['connect timeout (pg-pool)', err('timeout exceeded when trying to connect')],
  ['connection terminated (pg)', err('Connection terminated unexpectedly')],
  ['connection terminated by a connect timeout (pg)', err('Connection terminated due to connection timeout')],
  ['admin shutdown 57P01', err('terminating connection due to administrator command', '57P01')],
  ['crash shutdown 57P02', err('terminating connection because of crash of another server process', '57P02')],
  ['cannot connect now 57P03', err('the database system is shutting down', '57P03')],
  ['connection failure 08006', err('connection failure', '08006')],
  ['too many connections 53300', err('sorry, too many clients already', '53300')],
  ['a name that does not resolve', err('getaddrinfo ENOTFOUND db.example', 'ENOTFOUND')],
  [
    'every address refused (AggregateError)',
    Object.assign(
      new AggregateError([
        err('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
        err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      ]),
      { code: 'ECONNREFUSED' },
    ),
  ],
])('unreachable: %s', (_name, e) => {
  expect(isUnreachable(e)).toBe(true);
});

test.each([
  ['statement timeout 57014', err('canceling statement due to statement timeout', '57014')],
  ['syntax error 42601', err('syntax error at or near "SELEC"', '42601')],
  ['unique violation 23505', err('duplicate key value violates unique constraint', '23505')],
  ['undefined table 42P01', err('relation "records" does not exist', '42P01')],
  ['a plain Error', new Error('something else')],
  ['not an error', 'ECONNREFUSED'],
  ['null', null],
])('not unreachable: %s', (_name, e) => {
  expect(isUnreachable(e)).toBe(false);
});

test('README (Errors): a store that cannot be reached is SERVICE_UNAVAILABLE with a Retry-After, its cause kept out of the message', () => {
  const e = asLookupError(
    new StoreUnavailableError('PostgreSQL', err('connect ECONNREFUSED 10.9.8.7:5432', 'ECONNREFUSED')),
  );
  expect(e.code).toBe('SERVICE_UNAVAILABLE');
  expect(e.spec.status).toBe(503);
  expect(e.retryAfter).toBeGreaterThan(0);
  expect(e.message).not.toMatch(/10\.9\.8\.7|ECONNREFUSED/);
  // Anything else unexpected is still INTERNAL_ERROR.
  expect(asLookupError(new Error('boom')).code).toBe('INTERNAL_ERROR');
});
