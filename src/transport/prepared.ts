// Each record's answer, made once when the record is written (at import, or at start-up when the
// way answers are written has changed) rather than on every lookup: the result's children as an
// HTTP GET/POST answer holds them. The SOAP body holds the same elements without the line breaks
// and indentation, and with xsi:nil="true" where HTTP writes type="null"; since text is escaped
// (no '<' or '>' in it), that is two replacements, so only the HTTP form is stored. Neither form
// depends on the service namespace or the SOAP version: those are declared around them.
//
// The payload itself (vehicleJson) is not repeated in it: a U+0002 stands where its escaped text
// goes. So the prepared answer adds about 1.6 KB to a 1 KB vehicle. U+0002 cannot occur in an
// answer: XML 1.0 cannot carry it, and import refuses it. (Not U+0000: SQLite's own text functions
// and some of its tools stop at a NUL.)

import { createHash } from 'node:crypto';
import { findOperation } from '../contract/operations';
import { resultNodes, type XNode } from '../service/records';
import type { LookupResult } from '../service/lookup';
import type { PreparedForms } from '../store/store';
import { escapeText, httpResultInner, soapResultInner } from './xml';

export type Form = 'soap' | 'http';

const HOLE = '\u0002';
const PAD_RE = /\r\n *(?=<)/g;
const NULL_RE = / type="null" \/>/g;

/** The SOAP form of an HTTP-form fragment (see the top of this file). */
function compactOf(http: string): string {
  return http.replace(PAD_RE, '').replace(NULL_RE, ' xsi:nil="true" />');
}

function make(operation: string, payload: string, value?: unknown): string | null {
  const op = findOperation(operation);
  if (!op) return null;
  const nodes = resultNodes(op.result, payload, value);
  let holes = 0;
  const holed: XNode[] = nodes.map((n) => (n.text === payload ? (holes++, { ...n, text: HOLE }) : n));
  const http = httpResultInner(holed);
  // Checked here, once per record, rather than trusted: the SOAP form must come out of the stored
  // one exactly, and the holes must be only the payload's. Otherwise the record is built per lookup.
  // The two writers differ only in padding and in how an absent value is marked, and text is
  // escaped (no '<' or '>'), so compactOf can only go wrong on a text that ends in a line break and
  // spaces: without a CR anywhere in the payload (JSON.stringify writes one as \r) the SOAP form
  // need not be written to be compared, which was a fifth of an import's time.
  if (http.split(HOLE).length - 1 !== holes) return null;
  if (payload.includes('\\r') && compactOf(http) !== soapResultInner(holed)) return null;
  return http;
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
  if (prepared !== null) return fill(form === 'soap' ? compactOf(prepared) : prepared, result.payload);
  const nodes = resultNodes(result.kind, result.payload);
  return form === 'soap' ? soapResultInner(nodes) : httpResultInner(nodes);
}

// The version is a digest of what these probes become: between them they meet every rule of how an
// answer is written (escaping, absent and empty values, numbers given as text, lists with nulls),
// so any change in the writing makes the stored forms stale without anyone having to remember to
// say so. FORMAT is for a change the probes would not show.
const FORMAT = 2;
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

export const PREPARED_FORMS: PreparedForms = { version, make, source: { module: __filename, name: 'PREPARED_FORMS' } };
