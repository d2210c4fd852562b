// A lookup's answer, written from the stored payload when it is asked for: the result element's
// children, as a SOAP body holds them or as an HTTP GET/POST answer does. The store keeps only the
// payload (a record is about the size of its import line); the answer's tree and text are made
// here, per request.
//
// Nothing is kept between requests: lookups spread over a national register seldom ask for one
// record twice, so a cache of recent answers hardly ever hits, and each request would evict one
// long-lived answer and keep another, garbage only full collections free. That costs far more than
// writing an answer afresh (bench/SCALING-HISTORY.md, "Design decisions").

import type { ResultKind } from '../contract/operations';
import type { LookupResult } from '../service/lookup';
import { httpDate } from '../service/provenance';
import { resultNodes } from '../service/records';
import { httpResultInner, soapResultInner } from './xml';

type Form = 'soap' | 'http';

/** The children of a lookup's result element, as the given transport writes them. */
export function resultInner(result: { readonly kind: ResultKind; readonly payload: string }, form: Form): string {
  const nodes = resultNodes(result.kind, result.payload);
  return form === 'soap' ? soapResultInner(nodes) : httpResultInner(nodes);
}

/**
 * The answer's age in HTTP's standard headers (GET, POST and the JSON API): Last-Modified, the time
 * it is as of (RFC 9110's IMF-fixdate), when known; Age, the seconds since a cached upstream answer
 * was fetched (RFC 9111), for those only. With Last-Modified a shared cache may keep an answer that
 * says nothing of caching (RFC 9111 4.2.2, heuristic freshness) and serve it again uncharged, so
 * every answer says no-store.
 */
export function answerHeaders(result: LookupResult, headers: Record<string, string | number>): void {
  headers['Cache-Control'] = 'no-store';
  if (typeof result.asOf === 'number') headers['Last-Modified'] = httpDate(result.asOf);
  if (result.ageS !== undefined) headers.Age = result.ageS;
}
