// An answer as the JSON API writes it (transport/json.ts) and a batch job keeps it (service/batch.ts):
// the vehicle's own JSON text, or the UKMOTData fields as an object.

import type { LookupResult } from './lookup';
import { AS_OF_KEY, isoSecond, SOURCE_KEY } from './provenance';
import { resultNodes, type XNode } from './records';

// UKMOTData elements that hold a list (their children become a JSON array).
const LISTS = new Set(['Tests', 'FailureReasons', 'Advisories', 'ExtendedInformation', 'ArrayOfString']);

type Json = string | null | Json[] | { [k: string]: Json };

function nodeJson(n: XNode): Json {
  if (n.absent) return null;
  if (n.children) {
    if (LISTS.has(n.name)) return n.children.map(nodeJson);
    const o: { [k: string]: Json } = {};
    for (const c of n.children) o[c.name] = nodeJson(c);
    return o;
  }
  return n.text ?? '';
}

/**
 * The 200 body: vehicleJson (the vehicle's own JSON text, with its AnswerSource and AnswerAsOf), or the
 * UKMOTData fields (from the same element tree SOAP writes) and the same two keys.
 */
export function resultJson(result: LookupResult): string {
  if (result.kind === 'Vehicle') return result.payload;
  const o: { [k: string]: Json } = {};
  for (const n of resultNodes(result.kind, result.payload)) o[n.name] = nodeJson(n);
  o[SOURCE_KEY] = result.source;
  o[AS_OF_KEY] = result.asOf === null ? null : isoSecond(result.asOf);
  return JSON.stringify(o);
}
