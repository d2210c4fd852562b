// The bundled sample data, read the way a test needs it: one demo record per operation.

import fs from 'node:fs';
import { SAMPLE_FILE } from '../../src/app';

export interface SampleRecord {
  operation: string;
  registration: string;
  state?: string;
  vehicle?: Record<string, unknown>;
  mot?: Record<string, unknown>;
}

export const SAMPLE: SampleRecord[] = fs
  .readFileSync(SAMPLE_FILE, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as SampleRecord);

/** The first sample record of an operation. */
export function demo(operation: string): SampleRecord {
  const r = SAMPLE.find((s) => s.operation === operation);
  if (!r) throw new Error(`no sample record for ${operation}`);
  return r;
}

/** The lookup parameters that find a sample record (state under the operation's own name). */
export function demoParams(
  operation: string,
  paramNames: readonly string[],
  username = 'demo',
): Record<string, string> {
  const r = demo(operation);
  const out: Record<string, string> = { RegistrationNumber: r.registration };
  for (const p of paramNames) if (p === 'state' || p === 'State') out[p] = r.state as string;
  out.username = username;
  return out;
}
