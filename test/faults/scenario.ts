// The fault suite's record of each scenario: what was answered, what was charged, what was logged.
// Each scenario test calls recordScenario once; the suite's reporter (summary.js) prints them all
// after the run, so an operator reading CI's output sees every fault and what it cost.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ScenarioSummary {
  /** The fault, as an operator would name it ("store disk full", "Redis hung", ...). */
  readonly scenario: string;
  /** What callers got: counts of answers by status or outcome. */
  readonly answered: string;
  /** Credits taken against answers sent, and what the store holds after. */
  readonly charged: string;
  /** What the log said about it. */
  readonly logged: string;
}

/** Where the scenarios of one run are written (the reporter sets it; a lone jest run uses the default). */
export const SUMMARY_DIR = process.env.FAULTS_SUMMARY_DIR ?? path.join(os.tmpdir(), 'reglookup-faults');

export function recordScenario(s: ScenarioSummary): void {
  fs.mkdirSync(SUMMARY_DIR, { recursive: true });
  const file = path.join(SUMMARY_DIR, `${s.scenario.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.json`);
  fs.writeFileSync(file, JSON.stringify(s));
}
