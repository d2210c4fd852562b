// Each record's answer, made once when the record is written (at import, or at start-up when the
// way answers are written has changed) rather than on every lookup: the result's children as a SOAP
// body holds them and as an HTTP GET/POST answer holds them. Neither depends on the service
// namespace or the SOAP version: those are declared on the elements written around them.
//
// Stored as one text: the SOAP form, U+0001, the HTTP form. The payload itself (vehicleJson) is not
// repeated in them: a U+0002 stands where its escaped text goes, so that the prepared answers add
// about 2.5 KB to a 1 KB vehicle instead of 5 KB. Neither character can occur in an answer: XML 1.0
// cannot carry them, and import refuses them. (Not U+0000: SQLite's own text functions and some
// of its tools stop at a NUL.)

import { createHash } from 'node:crypto';
import { findOperation } from '../contract/operations';
import { resultNodes, type XNode } from '../service/records';
import type { LookupResult } from '../service/lookup';
import type { PreparedForms } from '../store/store';
import { escapeText, httpResultInner, soapResultInner } from './xml';

export type Form = 'soap' | 'http';

const HOLE = '\u0002';
const SEPARATOR = '\u0001';

function render(form: Form, nodes: readonly XNode[]): string {
  return form === 'soap' ? soapResultInner(nodes) : httpResultInner(nodes);
}

function make(operation: string, payload: string): string | null {
  const op = findOperation(operation);
  if (!op) return null;
  const nodes = resultNodes(op.result, payload);
  let holes = 0;
  const holed = nodes.map((n) => (n.text === payload ? (holes++, { ...n, text: HOLE }) : n));
  const soap = render('soap', holed);
  const http = render('http', holed);
  // A value holding U+0001 or U+0002 would be misread; import refuses them, and such a record would
  // simply be answered by building.
  if (soap.includes(SEPARATOR) || soap.split(HOLE).length - 1 !== holes) return null;
  return soap + SEPARATOR + http;
}

function fill(form: string, payload: string): string {
  let i = form.indexOf(HOLE);
  if (i === -1) return form;
  const text = escapeText(payload);
  let out = '';
  let from = 0;
  for (; i !== -1; i = form.indexOf(HOLE, from)) {
    out += form.slice(from, i) + text;
    from = i + 1;
  }
  return out + form.slice(from);
}

/** The children of a lookup's result element, as the given transport writes them. */
export function resultInner(result: LookupResult, form: Form): string {
  const prepared = result.prepared;
  if (prepared !== null) {
    const cut = prepared.indexOf(SEPARATOR);
    if (cut !== -1) return fill(form === 'soap' ? prepared.slice(0, cut) : prepared.slice(cut + 1), result.payload);
  }
  return render(form, resultNodes(result.kind, result.payload));
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
