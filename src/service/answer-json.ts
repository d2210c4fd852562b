// An answer as the JSON API writes it (transport/json.ts) and a batch job keeps it (service/batch.ts):
// the vehicle's own JSON text, or the UKMOTData fields as an object.

import type { LookupResult } from './lookup';
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

/** The 200 body: the vehicle's own JSON text, or the UKMOTData fields (from the same element tree SOAP writes). */
export function resultJson(result: LookupResult): string {
  if (result.kind === 'Vehicle') return result.payload;
  const o: { [k: string]: Json } = {};
  for (const n of resultNodes(result.kind, result.payload)) o[n.name] = nodeJson(n);
  return JSON.stringify(o);
}
