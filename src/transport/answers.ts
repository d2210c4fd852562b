// A lookup's answer, written from the stored payload when it is asked for: the result element's
// children, as a SOAP body holds them or as an HTTP GET/POST answer does. The store keeps only the
// payload (a record is about the size of its import line); the answer's tree and text are made here.
//
// The answers of recently asked records are kept, most recently used first, keyed by the payload
// itself: an answer is a pure function of the result kind and the payload, so a kept answer can
// never be stale (a record changed by an import has another payload, and is written anew), and
// nothing has to be told when records change. A record asked for again and again (a caller polling,
// a dealer checking the same car) costs one map probe instead of a parse and a tree.

import type { ResultKind } from '../contract/operations';
import { resultNodes } from '../service/records';
import type { LookupResult } from '../service/lookup';
import { httpResultInner, soapResultInner } from './xml';

export type Form = 'soap' | 'http';

/**
 * Payloads whose answers are kept. An entry holds the payload (the key, ~0.9 KB for a typical
 * vehicle) and the forms written so far (~2 KB each): about 5 MB at most.
 */
export const KEPT_ANSWERS = 1024;
/** A payload longer than this is answered without being kept (an MOT history of many tests). */
const KEEP_MAX_CHARS = 16 * 1024;

interface Forms {
  soap?: string;
  http?: string;
}

/** A payload's kept answers, as each kind (the same payload is another answer as a vehicle and as an MOT history). */
type Kept = Partial<Record<ResultKind, Forms>>;

/** Payload -> its kept answers; a Map iterates in insertion order, so the first key is the least recently asked. */
const kept = new Map<string, Kept>();

function write(kind: ResultKind, payload: string, form: Form): string {
  const nodes = resultNodes(kind, payload);
  return form === 'soap' ? soapResultInner(nodes) : httpResultInner(nodes);
}

/** The children of a lookup's result element, as the given transport writes them. */
export function resultInner(result: Pick<LookupResult, 'kind' | 'payload'>, form: Form): string {
  const { kind, payload } = result;
  if (payload.length > KEEP_MAX_CHARS) return write(kind, payload, form);
  let entry = kept.get(payload);
  if (entry === undefined) {
    entry = {};
    if (kept.size >= KEPT_ANSWERS) kept.delete(kept.keys().next().value as string);
  } else {
    kept.delete(payload); // to be set again as the most recent
  }
  kept.set(payload, entry);
  const forms = (entry[kind] ??= {});
  return (forms[form] ??= write(kind, payload, form));
}

/** How many payloads' answers are kept now (for tests of the bound). */
export function keptAnswers(): number {
  return kept.size;
}

/** Whether the answer of this payload, as this kind, is kept now (for tests of what is kept). */
export function answerKept(kind: ResultKind, payload: string): boolean {
  return kept.get(payload)?.[kind] !== undefined;
}
