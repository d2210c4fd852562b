// `reglookup import --format ua-mvs`: Ukraine's register of vehicle registration operations, as the
// Ministry of Internal Affairs publishes it on data.gov.ua (docs/data.md, "Ukraine's register"): a
// CSV a year, one row an operation (a first registration, a change of owner, a new plate, ...),
// separated by `;`, its header in lower case (2013-2018) or upper case and quoted (from 2019), `VIN`
// from 2021, dates written YYYY-MM-DD, DD.MM.YYYY or DD.MM.YY as the year wrote them. Each row with a
// plate becomes a CheckUkraine record for that plate; the import keeps a plate's newest operation
// (by D_REG, data/import.ts). The owner's columns (PERSON, REG_ADDR_KOATUU) are never read into a
// record, nor is a column this module does not know: a column added one year is not shown to callers
// until it is mapped here.

import { normalizeRegistration } from '../service/normalize';
import { plainJsonText, vehicleProblems } from '../service/records';
import { BLANK, INVALID, PUT, SKIPPED, type PackedChunk } from './chunk';
import { eachCsvRow, UNCLOSED_QUOTE } from './csv';
import { keyHash } from './keyset';
import type { ZipEntry } from './zip';

const OPERATION = 'CheckUkraine';

/** The 2026 files join the operation's code and name in one column, named after the SQL that made it. */
const FUSED_OPERATION_RE = /OPER_CODE.*\|\|/;

/** The columns read, by their upper-case names; a layout gives each one's index, or -1. */
const COLUMNS = [
  'OPER_CODE',
  'OPER_NAME',
  'D_REG',
  'DEP_CODE',
  'DEP',
  'BRAND',
  'MODEL',
  'VIN',
  'MAKE_YEAR',
  'COLOR',
  'KIND',
  'BODY',
  'PURPOSE',
  'FUEL',
  'CAPACITY',
  'POWER_KWT',
  'OWN_WEIGHT',
  'TOTAL_WEIGHT',
  'N_REG_NEW',
] as const;
type Column = (typeof COLUMNS)[number];

/** How one file's rows are read: its separator, its encoding, and where each column is. */
export interface MvsLayout {
  readonly separator: ';' | ',';
  readonly encoding: 'utf-8' | 'windows-1251';
  /** Fields a row has (the header's count). */
  readonly width: number;
  readonly at: Readonly<Record<Column, number>>;
  /** The fused operation column of the 2026 files, or -1. */
  readonly fused: number;
}

/** Why a header is not the register's, in one line. */
export class MvsHeaderError extends Error {}

const latin1 = new TextDecoder('latin1');

/**
 * The header row of a run (the first row of a file) as a layout, and the bytes after it. The
 * separator is the one the header holds more of (the register writes `;`; a file saved again by a
 * spreadsheet may hold `,`); names are compared without quotes, spaces or case.
 */
export function mvsHeader(run: Uint8Array): { layout: MvsLayout; rest: Uint8Array } {
  let end = run.indexOf(10);
  if (end === -1) end = run.length;
  // The header is ASCII in every year: latin1 reads it whatever the file's encoding.
  const line = latin1.decode(run.subarray(0, end)).replace(/\r$/, '');
  const separator = (line.match(/;/g)?.length ?? 0) >= (line.match(/,/g)?.length ?? 0) ? ';' : ',';
  let names: string[] = [];
  eachCsvRow(line, (fields) => (names = fields.map((f) => f.trim().toUpperCase())), separator);
  const at = Object.fromEntries(COLUMNS.map((c) => [c, names.indexOf(c)])) as Record<Column, number>;
  const fused = names.findIndex((n) => FUSED_OPERATION_RE.test(n));
  if (at.D_REG === -1 || (at.BRAND === -1 && at.MODEL === -1))
    throw new MvsHeaderError(
      `its header has no D_REG and BRAND columns: is it the Ministry of Internal Affairs' register of vehicle registrations (data.gov.ua)? It begins: ${line.slice(0, 80)}`,
    );
  const layout: MvsLayout = { separator, encoding: 'utf-8', width: names.length, at, fused };
  return { layout, rest: run.subarray(Math.min(end + 1, run.length)) };
}

/** The layout with the encoding the file's first rows are in: UTF-8 if they are valid UTF-8, else Windows-1251. */
export function withEncoding(layout: MvsLayout, firstRows: Uint8Array): MvsLayout {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(firstRows);
    return layout;
  } catch {
    return { ...layout, encoding: 'windows-1251' };
  }
}

/** Values the register writes where it holds none. */
const NO_VALUE = new Set(['', 'NULL', 'НЕВИЗНАЧЕНО', 'НЕ ВИЗНАЧЕНО']);
const LONGEST_NO_VALUE = 12;
// Characters XML cannot carry: noise in a public file, dropped rather than refusing its row.
const NOT_XML_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
// What a field may need cleaning of (most need none: one test, no copy).
const UNCLEAN_RE = /[\u0000-\u001f\ufffe\uffff]|\s\s|^\s|\s$/;

/** A field's text, spaces collapsed, or undefined when the register holds no value there. */
function text(fields: readonly string[], i: number): string | undefined {
  if (i < 0) return undefined;
  const raw = fields[i];
  if (raw === undefined) return undefined;
  const t = UNCLEAN_RE.test(raw) ? raw.replace(NOT_XML_RE, '').replace(/\s+/g, ' ').trim() : raw;
  if (t === '') return undefined;
  // Every value meaning none begins with N or Н, in either case: the rest need no upper-casing.
  const c = t.charCodeAt(0) | 0x20;
  if ((c === 0x6e || c === 0x43d) && t.length <= LONGEST_NO_VALUE && NO_VALUE.has(t.toUpperCase())) return undefined;
  return t;
}

/** A number the register writes as `1598`, `1598.0` or `1350,5`, or undefined (`1500/2000`, `1500 кг`). */
function amount(fields: readonly string[], i: number): number | undefined {
  const t = text(fields, i);
  if (t === undefined || !/^\d{1,9}(?:[.,]\d+)?$/.test(t)) return undefined;
  return Number(t.replace(',', '.'));
}

/** D_REG as a day number (days since 1970-01-01) and as YYYY-MM-DD, or null. */
function mvsDate(t: string | undefined): { day: number; iso: string } | null {
  if (t === undefined) return null;
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T][\d:.]*)?$/.exec(t);
  let y: string, mo: string, d: string;
  if (m) [y, mo, d] = [m[1], m[2], m[3]];
  else {
    m = /^(\d{2})\.(\d{2})\.(\d{2}|\d{4})$/.exec(t);
    if (!m) return null;
    // Two-digit years are this century's: the register begins in 2013.
    [y, mo, d] = [m[3].length === 2 ? `20${m[3]}` : m[3], m[2], m[1]];
  }
  const [year, month, dd] = [Number(y), Number(mo), Number(d)];
  // Date.UTC would carry 31.02 into March: the day must be one of its month's.
  const days =
    month === 2
      ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
        ? 29
        : 28
      : 30 + ((month + (month >> 3)) & 1);
  if (month < 1 || month > 12 || dd < 1 || dd > days || year < 1970) return null;
  return { day: Date.UTC(year, month - 1, dd) / 86_400_000, iso: `${y}-${mo}-${d}` };
}

/**
 * Brand and model without the model twice: until 2018 BRAND holds the brand and the model together
 * (`TESLA  MODEL X` beside MODEL `MODEL  X`), so a BRAND ending in the MODEL is cut back to the brand.
 */
function brandAndModel(brand: string | undefined, model: string | undefined): [string | undefined, string | undefined] {
  if (brand === undefined || model === undefined) return [brand, model];
  const b = brand.toUpperCase();
  const m = model.toUpperCase();
  if (b === m) return [brand, undefined];
  if (b.endsWith(` ${m}`)) return [brand.slice(0, brand.length - model.length).trimEnd(), model];
  return [brand, model];
}

/**
 * The operation's code and name, from OPER_CODE and OPER_NAME (its name may repeat the code:
 * `40 - ...`) or the fused column.
 */
function operationOf(fields: readonly string[], layout: MvsLayout): [number | undefined, string | undefined] {
  const joined = layout.fused >= 0 ? text(fields, layout.fused) : undefined;
  const codeText = joined === undefined ? text(fields, layout.at.OPER_CODE) : undefined;
  const name = joined ?? text(fields, layout.at.OPER_NAME);
  const m = name === undefined ? null : /^(\d{1,4})\s*-\s*(.*)$/.exec(name);
  const code = codeText !== undefined && /^\d{1,6}$/.test(codeText) ? Number(codeText) : m ? Number(m[1]) : undefined;
  return [code, m && (code === undefined || Number(m[1]) === code) ? m[2] || undefined : name];
}

/**
 * A text as a JSON string. text() leaves no control character in a field, and decoding makes no lone
 * surrogate, so only a quote or a backslash needs JSON.stringify's escaping.
 */
const quoted = (t: string) => (t.includes('"') || t.includes('\\') ? JSON.stringify(t) : `"${t}"`);
/** `"key":value` for the payload's text; nothing for a value the register does not hold. */
const member = (key: string, value: string | number | undefined) =>
  value === undefined ? '' : `,"${key}":${typeof value === 'number' ? value : quoted(value)}`;
/** A composite of vehicleData, as the RDW mapping writes one. */
const composite = (key: string, value: number | null, t: string | undefined) =>
  t === undefined ? '' : `,"${key}":{"CurrentValue":${value},"CurrentTextValue":${quoted(t)}}`;

/** A whole number the register writes as a weight or a capacity, or undefined (0 is no value). */
function whole(fields: readonly string[], i: number): number | undefined {
  const n = amount(fields, i);
  return n !== undefined && n > 0 ? Math.round(n) : undefined;
}

/**
 * One row -> the record's payload: the vehicle as the contract's fields (docs/data.md, the mapping
 * table), then the other columns under keys of vehicleJson. PERSON and REG_ADDR_KOATUU are not read.
 * Written as JSON text directly (millions of rows: no object a row to stringify).
 */
function mvsPayload(fields: readonly string[], layout: MvsLayout, iso: string): string {
  const { at } = layout;
  const [make, model] = brandAndModel(text(fields, at.BRAND), text(fields, at.MODEL));
  const engine = whole(fields, at.CAPACITY);
  const year = text(fields, at.MAKE_YEAR);
  const cc = engine === undefined ? undefined : `${engine}cc`;
  const description = make === undefined ? model : model === undefined ? make : `${make} ${model}`;
  const [code, operation] = operationOf(fields, layout);
  const json =
    member('Description', description === undefined ? cc : cc === undefined ? description : `${description} ${cc}`) +
    // 1900 is the register's placeholder for an unknown year.
    member(
      'RegistrationYear',
      year !== undefined && /^\d{4}$/.test(year) && year !== '1900' ? Number(year) : undefined,
    ) +
    (make === undefined ? '' : `,"CarMake":{"CurrentTextValue":${quoted(make)}}`) +
    (model === undefined ? '' : `,"CarModel":{"CurrentTextValue":${quoted(model)}}`) +
    composite('BodyStyle', null, text(fields, at.BODY)) +
    composite('EngineSize', engine ?? null, cc) +
    composite('FuelType', null, text(fields, at.FUEL)) +
    composite('MakeDescription', null, make) +
    composite('ModelDescription', null, model) +
    member('Colour', text(fields, at.COLOR)) +
    member('VehicleType', text(fields, at.KIND)) +
    member('Purpose', text(fields, at.PURPOSE)) +
    member('VehicleIdentificationNumber', text(fields, at.VIN)?.toUpperCase()) +
    member('MassEmpty', whole(fields, at.OWN_WEIGHT)) +
    member('MassMaximum', whole(fields, at.TOTAL_WEIGHT)) +
    member('PowerKw', amount(fields, at.POWER_KWT)) +
    member('OperationDate', iso) +
    member('OperationCode', code) +
    member('Operation', operation) +
    member('ServiceCentre', text(fields, at.DEP)) +
    member('ServiceCentreCode', text(fields, at.DEP_CODE));
  return `{${json.slice(1)}}`;
}

/** A plate the register holds no value for: empty, or without a digit (`Б/Н`, "without a number"). */
const NO_PLATE_RE = /^[^0-9]*$/;

type Outcome =
  | { kind: typeof PUT; registration: string; day: number; payload: string }
  | { kind: typeof SKIPPED | typeof BLANK }
  | { kind: typeof INVALID; reason: string };

/** One row's outcome: a record for its plate, skipped (no plate), or why it cannot be imported. */
function rowOutcome(fields: readonly string[], layout: MvsLayout): Outcome {
  if (fields.length === 1 && fields[0].trim() === '') return { kind: BLANK };
  if (fields.length !== layout.width)
    return { kind: INVALID, reason: `the row has ${fields.length} field(s) where the header has ${layout.width}` };
  const plate = text(fields, layout.at.N_REG_NEW);
  if (plate === undefined || NO_PLATE_RE.test(plate)) return { kind: SKIPPED };
  const reg = normalizeRegistration(plate);
  if (!reg.ok) return { kind: INVALID, reason: `N_REG_NEW ${reg.reason}` };
  const raw = text(fields, layout.at.D_REG);
  const date = mvsDate(raw);
  if (!date)
    return {
      kind: INVALID,
      reason: `D_REG ${JSON.stringify(raw ?? '')} is not a date (DD.MM.YY, DD.MM.YYYY or YYYY-MM-DD)`,
    };
  const payload = mvsPayload(fields, layout, date.iso);
  // Its texts hold nothing XML cannot carry (text() drops it); what is left to check is a text too
  // long, which only a payload this long can hold.
  if (!plainJsonText(payload)) {
    const problems = vehicleProblems(JSON.parse(payload), false);
    if (problems.length > 0) return { kind: INVALID, reason: problems.join('; ') };
  }
  return { kind: PUT, registration: reg.value, day: date.day, payload };
}

/**
 * A run of whole rows of one file -> its rows' outcomes, packed as chunk.ts packs NDJSON lines, with
 * each record's day.
 */
export function packMvsRows(bytes: Uint8Array, layout: MvsLayout): PackedChunk {
  const kinds: number[] = [];
  const ends: number[] = [];
  const hashes: number[] = [];
  const days: number[] = [];
  const reasons: string[] = [];
  let all = '';
  eachCsvRow(
    new TextDecoder(layout.encoding, { ignoreBOM: true }).decode(bytes),
    (fields) => {
      const o = rowOutcome(fields, layout);
      kinds.push(o.kind);
      if (o.kind === INVALID) reasons.push(o.reason);
      if (o.kind !== PUT) return;
      all += OPERATION;
      ends.push(all.length);
      all += o.registration;
      ends.push(all.length, all.length);
      all += o.payload;
      ends.push(all.length);
      const [a, b] = keyHash(OPERATION, o.registration, '');
      hashes.push(a, b);
      days.push(o.day);
    },
    layout.separator,
    () => {
      kinds.push(INVALID);
      reasons.push(UNCLOSED_QUOTE);
    },
  );
  return {
    kinds: Uint8Array.from(kinds),
    text: all,
    ends: Int32Array.from(ends),
    hashes: Uint32Array.from(hashes),
    reasons,
    days: Uint16Array.from(days),
  };
}

/** The Ministry's clock: its archives' MS-DOS times are read as this zone's wall-clock time. */
const MVS_ZONE = 'Europe/Kyiv';
/**
 * Its clock, made on first use: a formatter with a time zone loads ICU's zone data, megabytes that
 * every process loading this module (the server does, for the sample) would otherwise hold.
 */
let zoneClock: Intl.DateTimeFormat | null = null;

/** How far MVS_ZONE's clock is ahead of UTC at the instant `utc` (ms). */
function zoneOffset(utc: number): number {
  zoneClock ??= new Intl.DateTimeFormat('en-US', {
    timeZone: MVS_ZONE,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const part: Record<string, number> = {};
  for (const p of zoneClock.formatToParts(new Date(utc))) if (p.type !== 'literal') part[p.type] = Number(p.value);
  const wall = Date.UTC(part.year, part.month - 1, part.day, part.hour, part.minute, part.second);
  return wall - Math.floor(utc / 1000) * 1000;
}

/**
 * When a register file in an archive was written (ms since the epoch): its extended timestamp when it
 * has one (UTC), else its MS-DOS time, which carries no zone and is read as Kyiv's wall clock (the
 * Ministry's). The register's files hold no extraction date of their own; this is the one the format gives.
 */
export function mvsWrittenAt(entry: Pick<ZipEntry, 'writtenUtc' | 'written'>): number {
  if (entry.writtenUtc !== null) return entry.writtenUtc;
  const w = entry.written;
  const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  // The offset at the wall time read as UTC, then again at the instant that gives: right across a change of offset.
  return wall - zoneOffset(wall - zoneOffset(wall));
}
