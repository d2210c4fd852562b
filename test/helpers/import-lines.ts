// Import files written inline: NDJSON lines of hand-made records, and what a store then answers.

import { Readable } from 'node:stream';
import { importStream, type ImportOptions } from '../../src/data/import';
import type { VehicleStore } from '../../src/store/store';

/** A minimal vehicle the import accepts, told apart by its description. */
export const car = (description: string) => ({
  Description: description,
  RegistrationYear: 2019,
  CarMake: { CurrentValue: null, CurrentTextValue: 'FORD' },
  ImageUrl: 'x',
});

/** An import line: a Check record. */
export const check = (reg: string, description: string) =>
  JSON.stringify({ operation: 'Check', registration: reg, vehicle: car(description) });

/** An import line: a CheckUSA record in California. */
export const usa = (reg: string, description: string) =>
  JSON.stringify({ operation: 'CheckUSA', registration: reg, state: 'CA', vehicle: car(description) });

/** The lines as one NDJSON stream. */
export const ndjson = (...lines: string[]) => Readable.from([lines.join('\n') + '\n']);

/** Imports the lines into the store. */
export const run = (store: VehicleStore, options: ImportOptions, ...lines: string[]) =>
  importStream(store, ndjson(...lines), options);

/** The stored record's Description, or null when there is none. */
export const description = async (store: VehicleStore, operation: string, registration: string, state = '') => {
  const r = await store.get({ operation, registration, state });
  return r ? (JSON.parse(r.payload) as { Description: string }).Description : null;
};
