// `reglookup import --format rdw`: RDW's bulk CSV of the registered-vehicles data set (m9d7-ebf2),
// under either header (the API's field names, `kenteken`, or the portal's column titles,
// `Kenteken`), one CheckNetherlands record a row, mapped by providers/rdw-map.ts as the rdw
// provider maps an API answer. The fuel data set (8ys7-d773, --fuel) is read first into a map of
// kenteken -> the record's fuel part as JSON text (only what the record keeps of it), and joined to
// each vehicle as text by the writer (joinFuel): the workers parsing the vehicles need not hold it.

import { mapRdwFuel, mapRdwVehicle, rdwFieldName, type RdwRow } from '../providers/rdw-map';
import { normalizeRegistration } from '../service/normalize';
import { plainJsonText, vehicleProblems } from '../service/records';
import { CsvInputError, csvRuns, eachCsvRow, UNCLOSED_QUOTE } from './csv';
import { BLANK, INVALID, PUT, type PackedChunk } from './chunk';
import { keyHash } from './keyset';

const OPERATION = 'CheckNetherlands';
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The header's columns as API field names, and the bytes of the run after the header row. */
export function splitHeader(run: Uint8Array): { columns: string[]; rest: Uint8Array } {
  let inQuotes = false;
  let end = run.length;
  for (let i = 0; i < run.length; i++) {
    const c = run[i];
    if (c === 34) inQuotes = !inQuotes;
    else if (c === 10 && !inQuotes) {
      end = i;
      break;
    }
  }
  let columns: string[] = [];
  eachCsvRow(decoder.decode(run.subarray(0, end)), (fields) => (columns = fields.map(rdwFieldName)));
  return { columns, rest: run.subarray(Math.min(end + 1, run.length)) };
}

/** Why a header is not one of the registered-vehicles data set, or null. */
export function vehicleHeaderProblem(columns: readonly string[]): string | null {
  if (!columns.includes('kenteken'))
    return `its header has no Kenteken (kenteken) column: is it RDW's registered-vehicles CSV (m9d7-ebf2)?`;
  if (!columns.includes('merk') && columns.includes('brandstof_omschrijving'))
    return 'it is the fuel data set (8ys7-d773): give it with --fuel, after the registered-vehicles file';
  return null;
}

/** A CSV row as an RDW row: the header's names, empty fields left out (as the API leaves them out). */
function rowOf(columns: readonly string[], fields: readonly string[]): RdwRow {
  const row: Record<string, string> = {};
  for (let i = 0; i < columns.length; i++) {
    const v = fields[i];
    if (v !== undefined && v !== '') row[columns[i]] = v;
  }
  return row;
}

/** A run of whole rows of the vehicles file -> its rows' outcomes, packed as chunk.ts packs NDJSON lines. */
export function packRdwRows(bytes: Uint8Array, columns: readonly string[]): PackedChunk {
  const kinds: number[] = [];
  const ends: number[] = [];
  const hashes: number[] = [];
  const reasons: string[] = [];
  let text = '';
  const refuse = (reason: string) => {
    kinds.push(INVALID);
    reasons.push(reason);
  };
  const onRow = (fields: string[]) => {
    if (fields.length === 1 && fields[0].trim() === '') return void kinds.push(BLANK);
    if (fields.length !== columns.length)
      return refuse(`the row has ${fields.length} field(s) where the header has ${columns.length}`);
    const row = rowOf(columns, fields);
    const reg = normalizeRegistration(typeof row.kenteken === 'string' ? row.kenteken : '');
    if (!reg.ok) return refuse(`kenteken ${reg.reason}`);
    const record = mapRdwVehicle(row);
    const payload = JSON.stringify(record);
    const problems = vehicleProblems(record, plainJsonText(payload));
    if (problems.length > 0) return refuse(problems.join('; '));
    kinds.push(PUT);
    text += OPERATION;
    ends.push(text.length);
    text += reg.value;
    ends.push(text.length, text.length);
    text += payload;
    ends.push(text.length);
    const [a, b] = keyHash(OPERATION, reg.value, '');
    hashes.push(a, b);
  };
  eachCsvRow(decoder.decode(bytes), onRow, ',', () => refuse(UNCLOSED_QUOTE));
  return {
    kinds: Uint8Array.from(kinds),
    text,
    ends: Int32Array.from(ends),
    hashes: Uint32Array.from(hashes),
    reasons,
  };
}

/** kenteken (normalised) -> the record's fuel part as JSON members (`"FuelType":...,"rdwFuel":[...]`), for joinFuel. */
export type FuelMap = Map<string, string>;

/** The fuel part of a vehicle RDW lists no fuel for (a trailer). */
const NO_FUEL = JSON.stringify(mapRdwFuel([])).slice(1, -1);

/** A plate's fuel part as JSON members, checked as an import checks a record's fields. */
function fuelPart(plate: string, rows: readonly RdwRow[]): string {
  const part = mapRdwFuel(rows);
  // FuelType is the one vehicleData field a fuel part holds.
  const problem = part.FuelType === undefined ? undefined : vehicleProblems({ FuelType: part.FuelType })[0];
  if (problem) throw new CsvInputError(`kenteken ${plate}: ${problem}`);
  return JSON.stringify(part).slice(1, -1);
}

/**
 * Reads the fuel file whole into a FuelMap: each row is made into its plate's fuel part as it is
 * read, and held only as that text. Rows of one plate need not be next to each other: a plate met
 * again (a hybrid) has its rows kept as objects until the end, then its part made from all of them.
 */
export async function readFuel(
  input: AsyncIterable<Uint8Array | string>,
  onRow?: (rows: number) => void,
): Promise<FuelMap> {
  const fuel: FuelMap = new Map();
  const several = new Map<string, RdwRow[]>();
  let columns: string[] | null = null;
  let rows = 0;
  let line = 1;
  for await (let run of csvRuns(input)) {
    if (columns === null) {
      const h = splitHeader(run);
      columns = h.columns;
      if (!columns.includes('kenteken') || !columns.includes('brandstof_omschrijving')) {
        throw new CsvInputError(
          `its header has no Kenteken and Brandstof omschrijving columns: is it RDW's fuel CSV (8ys7-d773)?`,
        );
      }
      run = h.rest;
    }
    const cols = columns;
    const unclosed = () => {
      throw new CsvInputError(`row ${line + 1}: ${UNCLOSED_QUOTE}`);
    };
    eachCsvRow(
      decoder.decode(run),
      (fields) => {
        line++;
        if (fields.length === 1 && fields[0].trim() === '') return;
        if (fields.length !== cols.length)
          throw new CsvInputError(`row ${line} has ${fields.length} field(s) where the header has ${cols.length}`);
        const row = rowOf(cols, fields);
        const reg = normalizeRegistration(typeof row.kenteken === 'string' ? row.kenteken : '');
        if (!reg.ok) throw new CsvInputError(`row ${line}: kenteken ${reg.reason}`);
        rows++;
        const plate = reg.value;
        const more = several.get(plate);
        const part = fuel.get(plate);
        if (more) more.push(row);
        // The plate's first row is held only in its part's text (under rdwFuel): read back from it.
        else if (part !== undefined)
          several.set(plate, [...(JSON.parse(`{${part}}`) as { rdwFuel: RdwRow[] }).rdwFuel, row]);
        else fuel.set(plate, fuelPart(plate, [row]));
      },
      ',',
      unclosed,
    );
    onRow?.(rows);
  }
  for (const [plate, list] of several) fuel.set(plate, fuelPart(plate, list));
  return fuel;
}

/** A vehicle's payload (a JSON object's text) with its fuel part joined on. */
export function joinFuel(fuel: FuelMap, registration: string, payload: string): string {
  return `${payload.slice(0, -1)},${fuel.get(registration) ?? NO_FUEL}}`;
}

export { csvRuns, CsvInputError };
