// A lookup's answer, written from the stored payload when it is asked for: the result element's
// children, as a SOAP body holds them or as an HTTP GET/POST answer does. The store keeps only the
// payload (a record is about the size of its import line); the answer's tree and text are made
// here, per request.
//
// Nothing is kept between requests. A cache of recent answers was measured (1,024 payloads, keyed
// by the payload): with lookups spread over a national register it hardly ever hits, and every
// request then evicts one long-lived answer and keeps another, garbage the heap can only free in
// full collections: GET Check went from 109-120 to 182-276 us of CPU a request (bench, 100,000
// vehicles drawn at random), against 5-10 us for writing an answer afresh.

import type { ResultKind } from '../contract/operations';
import { resultNodes } from '../service/records';
import { httpResultInner, soapResultInner } from './xml';

type Form = 'soap' | 'http';

/** The children of a lookup's result element, as the given transport writes them. */
export function resultInner(result: { readonly kind: ResultKind; readonly payload: string }, form: Form): string {
  const nodes = resultNodes(result.kind, result.payload);
  return form === 'soap' ? soapResultInner(nodes) : httpResultInner(nodes);
}
