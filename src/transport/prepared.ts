// Each record's answer, made once when the record is written (at import, or at start-up when the
// way answers are written has changed) rather than on every lookup: the result's children as a
// SOAP body holds them and as an HTTP GET/POST answer holds them. Neither depends on the service
// namespace or the SOAP version: those are declared on the elements written around them.

import { createHash } from 'node:crypto';
import { findOperation } from '../contract/operations';
import { resultNodes } from '../service/records';
import type { PreparedForms } from '../store/store';
import { httpResultInner, soapResultInner } from './xml';

/** Form numbers, as the store keeps them. */
export const FORM_SOAP = 0;
export const FORM_HTTP = 1;

function make(operation: string, payload: string): string[] {
  const op = findOperation(operation);
  // Records are checked against the catalogue at import; a row that is not is left to be built per request.
  if (!op) return [];
  const nodes = resultNodes(op.result, payload);
  const forms: string[] = [];
  forms[FORM_SOAP] = soapResultInner(nodes);
  forms[FORM_HTTP] = httpResultInner(nodes);
  return forms;
}

// The version is a digest of what these probes become: between them they meet every rule of how an
// answer is written (escaping, absent and empty values, numbers given as text, lists with nulls),
// so any change in the writing makes the stored forms stale without anyone having to remember to
// say so. FORMAT is for a change the probes would not show.
const FORMAT = 1;
const PROBES: ReadonlyArray<readonly [string, string]> = [
  [
    'Check',
    JSON.stringify({
      ABICode: ' 0042 ',
      Description: 'A & B <"quoted"> \'single\' \u00e9\u20ac\ud83d\ude97 \r\n\t end',
      RegistrationYear: 2004,
      ManufactureYearFrom: '1999',
      CarMake: { CurrentTextValue: 'MAKE' },
      CarModel: { CurrentValue: null, CurrentTextValue: 'MODEL' },
      BodyStyle: { CurrentValue: 3, CurrentTextValue: null },
      EngineSize: 1598,
      NumberOfDoors: { CurrentValue: '5', CurrentTextValue: '5' },
      MakeDescription: 'plain',
      IndicativeValue: { CurrentTextValue: '' },
      Extra: { nested: [1, null, 'x'] },
    }),
  ],
  ['CheckUSA', '{}'],
  [
    'UKMOT',
    JSON.stringify({
      make: 'M',
      model: 'X',
      taxDate: '2026-01-01',
      tests: [
        { TestDate: '2025-01-01', Result: 'Pass', Odometer: 12, FailureReasons: ['a < b', null], Advisories: [] },
        { TestNumber: '1' },
      ],
      extendedInformation: [['k', 'v & w'], [], [null]],
    }),
  ],
  ['UKMOT', '{}'],
];

const version = createHash('sha256')
  .update(JSON.stringify([FORMAT, PROBES.map(([op, payload]) => make(op, payload))]))
  .digest('hex')
  .slice(0, 16);

export const PREPARED_FORMS: PreparedForms = { version, make };
