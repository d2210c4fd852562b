// A batch job's input as docs/calling.md ("Batch jobs") describes it: CSV with a header row (names in
// any order and case, RegistrationNumber for registration, quotes as RFC 4180 has them, CRLF, a BOM)
// or JSON; what is wrong with the whole input refuses it, what is wrong with one row is left to that row.

import { batchRows } from '../../src/service/batch-input';
import { LookupError } from '../../src/core/errors';

const refused = (body: string, type = 'text/csv', max = 10): string => {
  try {
    batchRows(body, type, max);
  } catch (e) {
    return (e as LookupError).code;
  }
  return 'accepted';
};

test('a CSV header in any order and case, quoted fields, CRLF and a BOM', () => {
  const csv = '\ufeffState,RegistrationNumber,OPERATION\r\nCA,"7ABC 123",CheckUSA\r\n,"RG11 ""A"", B",Check\r\n\r\n';
  expect(batchRows(csv, 'text/csv', 10)).toEqual([
    { operation: 'CheckUSA', registration: '7ABC 123', state: 'CA' },
    { operation: 'Check', registration: 'RG11 "A", B', state: '' },
  ]);
});

test('?operation= fills rows without an operation column; a row naming an unknown one is kept for its own error', () => {
  expect(batchRows('registration\nRG11 ABC\n', 'text/csv', 10, 'Check')).toEqual([
    { operation: 'Check', registration: 'RG11 ABC', state: '' },
  ]);
  expect(batchRows('operation,registration\nCheckMars,RG11 ABC\n', 'text/csv', 10)).toEqual([
    { operation: 'CheckMars', registration: 'RG11 ABC', state: '' },
  ]);
});

test('JSON: a list, or {"rows": [...]}', () => {
  const rows = [{ operation: 'Check', registration: 'RG11 ABC' }];
  expect(batchRows(JSON.stringify(rows), 'application/json', 10)).toEqual([
    { operation: 'Check', registration: 'RG11 ABC', state: '' },
  ]);
  expect(batchRows(JSON.stringify({ rows }), 'application/json', 10)).toHaveLength(1);
});

test('the whole input refused: too many rows, a bad header, no operation, no rows, bad JSON, an open quote', () => {
  expect(refused('operation,registration\n' + 'Check,A1\n'.repeat(11))).toBe('PAYLOAD_TOO_LARGE');
  expect(
    refused(
      JSON.stringify(
        Array.from({ length: 11 }, () => ({})),
        undefined,
      ),
      'application/json',
    ),
  ).toBe('PAYLOAD_TOO_LARGE');
  expect(refused('operation,plate\nCheck,A1\n')).toBe('MALFORMED_REQUEST');
  expect(refused('operation,registration,colour\nCheck,A1,red\n')).toBe('MALFORMED_REQUEST');
  expect(refused('registration\nA1\n')).toBe('MALFORMED_REQUEST');
  expect(refused('operation,registration\n')).toBe('MALFORMED_REQUEST');
  expect(refused('{"rows": 3}', 'application/json')).toBe('MALFORMED_REQUEST');
  expect(refused('operation,registration\nCheck,"A1\n')).toBe('MALFORMED_REQUEST');
});

test('a header refused says which column is wrong, and that fields are separated by commas', () => {
  const message = (text: string) => {
    try {
      batchRows(text, 'text/csv', 10);
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };
  expect(message('operation,registration,colour\nCheck,A1,red\n')).toMatch(/does not take: "colour"/);
  expect(message('operation;registration\nCheck;A1\n')).toMatch(/separated by commas/);
  expect(message('operation,state\nCheck,CA\n')).toMatch(/no registration column/);
});
