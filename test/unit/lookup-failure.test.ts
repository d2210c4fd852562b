// What a transport does with a failed lookup (README, Errors and Sandbox): an unexpected failure is
// answered INTERNAL_ERROR with no detail and logged with its stack as 'lookup failed'; a refusal is
// answered as thrown and not logged; the sandbox's ER19ERR rehearses an INTERNAL_ERROR and is not
// logged, while a real failure on a sandbox plate is.

import type { IncomingMessage } from 'node:http';
import { LookupError } from '../../src/core/errors';
import { setContext } from '../../src/transport/context';
import { lookupFailure } from '../../src/transport/lookup';
import { fakeLogger } from '../helpers/logger';

function request(sandbox: boolean): IncomingMessage {
  const req = {} as IncomingMessage;
  setContext(req, { id: 'r1', start: 0, sandbox });
  return req;
}

test('an unexpected failure is INTERNAL_ERROR with no detail, logged with its stack and the operation', () => {
  const { logger, lines } = fakeLogger();
  const err = lookupFailure(request(false), new Error('disk image is malformed'), 'Check', logger);
  expect([err.code, err.message]).toEqual(['INTERNAL_ERROR', 'Internal error; the request was logged']);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'error', message: 'lookup failed', meta: { operation: 'Check' } });
  expect((lines[0].meta as { error: string }).error).toMatch(/^Error: disk image is malformed\n\s+at /);
});

test('a refusal is answered as thrown and not logged', () => {
  const { logger, lines } = fakeLogger();
  const thrown = new LookupError('VEHICLE_NOT_FOUND', 'No vehicle found');
  expect(lookupFailure(request(false), thrown, 'Check', logger)).toBe(thrown);
  expect(lines).toEqual([]);
});

test("the sandbox's own INTERNAL_ERROR is not logged; a real failure on a sandbox plate is", () => {
  const { logger, lines } = fakeLogger();
  const rehearsed = LookupError.internal('(sandbox registration ER19ERR)');
  expect(lookupFailure(request(true), rehearsed, 'Check', logger)).toBe(rehearsed);
  expect(lines).toEqual([]);
  expect(lookupFailure(request(true), 'not an Error', 'UKMOT', logger).code).toBe('INTERNAL_ERROR');
  expect(lines.map((l) => [l.message, l.meta])).toEqual([
    ['lookup failed', { operation: 'UKMOT', error: 'not an Error' }],
  ]);
});
