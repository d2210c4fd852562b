// Where an answer came from and as of when: `import` and the time its operation was imported (the
// register file's extraction time where the format gives one), `cache` and the time the upstream
// answer was fetched, or the upstream that answered just now. Said in vehicleJson (two keys added to
// the record's JSON as it is answered, never stored) and, by the HTTP transports, as Last-Modified and Age.

import type { VehicleStore } from '../store/store';

/** The keys vehicleJson gains: names no register or upstream uses, so they never stand beside their own. */
export const SOURCE_KEY = 'AnswerSource';
export const AS_OF_KEY = 'AnswerAsOf';

/** The last instant written and its texts: an operation's imported records all share one time. */
let lastMs = NaN;
let lastIso = '';
let lastHttp = '';

function remember(ms: number): void {
  if (ms === lastMs) return;
  const d = new Date(Math.floor(ms / 1000) * 1000);
  lastIso = d.toISOString().replace('.000Z', 'Z');
  lastHttp = d.toUTCString();
  lastMs = ms;
}

/** An instant as vehicleJson gives it: ISO 8601 in UTC, to the second (as Last-Modified has it). */
export function isoSecond(ms: number): string {
  remember(ms);
  return lastIso;
}

/** An instant as Last-Modified gives it: RFC 9110's IMF-fixdate (`Thu, 15 Oct 2026 06:30:00 GMT`). */
export function httpDate(ms: number): string {
  remember(ms);
  return lastHttp;
}

/** The last source and time added to a record, and the text added for them. */
let addedFor = { source: '', asOf: NaN as number | null, text: '' };

function addedText(source: string, asOf: number | null): string {
  if (addedFor.source !== source || addedFor.asOf !== asOf) {
    const at = asOf === null ? 'null' : `"${isoSecond(asOf)}"`;
    addedFor = { source, asOf, text: `"${SOURCE_KEY}":${JSON.stringify(source)},"${AS_OF_KEY}":${at}` };
  }
  return addedFor.text;
}

/**
 * The record's JSON object text with AnswerSource and AnswerAsOf added at its end (null: not known).
 * The text is the stored one, an object checked at import or fetch; it is spliced, not parsed and
 * written again, so that its own bytes (`1.50`) stay as they are. A record that already holds either
 * key (an import may keep any key) has it replaced, through a parse: the answer never holds a key twice.
 */
export function withProvenance(payload: string, source: string, asOf: number | null): string {
  const added = addedText(source, asOf);
  if (payload.includes('"Answer')) {
    const o = JSON.parse(payload) as Record<string, unknown>;
    if (Object.hasOwn(o, SOURCE_KEY) || Object.hasOwn(o, AS_OF_KEY)) {
      delete o[SOURCE_KEY];
      delete o[AS_OF_KEY];
      return withProvenance(JSON.stringify(o), source, asOf);
    }
  }
  const end = payload.lastIndexOf('}');
  let last = end - 1;
  while (last >= 0 && ' \t\r\n'.includes(payload[last])) last--;
  return payload.slice(0, end) + (payload[last] === '{' ? '' : ',') + added + payload.slice(end);
}

/** How long the operations' import times are used before they are read again (ms). */
const TIMES_FRESH_MS = 1000;

/**
 * Each operation's import time as the store keeps it (ImportTimes), read at most once a second per
 * process rather than at every lookup: a refresh committed by another process is seen within a
 * second, and until then its records are said to be as of the import before, never newer than they are.
 * A failed read keeps the times read before (an answer's age is worth no refusal).
 */
export class ImportTimesCache {
  private times: ReadonlyMap<string, number> = new Map();
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;
  /** The first read has ended (well or not): lookups no longer wait for one. */
  private loaded = false;

  constructor(
    private readonly store: Pick<VehicleStore, 'importTimes'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The operation's import time, null when it is not known; a promise only until the first read has
   * ended (the lookup path awaits nothing more once the times are known).
   */
  of(operation: string): number | null | Promise<number | null> {
    if (this.now() - this.readAt >= TIMES_FRESH_MS) void this.read();
    if (!this.loaded && this.reading) return this.reading.then(() => this.times.get(operation) ?? null);
    return this.times.get(operation) ?? null;
  }

  private read(): Promise<void> {
    if (this.reading) return this.reading;
    const importTimes = this.store.importTimes?.bind(this.store);
    this.readAt = this.now();
    if (!importTimes) {
      this.loaded = true;
      return Promise.resolve();
    }
    this.reading = importTimes()
      .then(
        (t) => {
          this.times = t;
        },
        () => undefined,
      )
      .finally(() => {
        this.reading = null;
        this.loaded = true;
      });
    return this.reading;
  }
}
