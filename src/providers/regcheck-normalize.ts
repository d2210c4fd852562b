// What a RegCheck-compatible service answers, made fit for the contract before the chain checks it
// as an imported record (service/records.ts). The public service writes its vehicleJson loosely:
// `"ABICode": ""`, years as "2014" or 2014, a seat count as 5 inside CurrentTextValue,
// `MakeDescription` as a plain string or a composite, empty composites (`{"CurrentTextValue": ""}`),
// and keys of its own (ImageUrl, VehicleInsuranceGroup, VehicleIdentificationNumber, ...). What the
// contract can carry is kept as it came, so that vehicleJson shows the upstream's own text: digits
// for an integer, a number or a string for a text, empty composites, every key of its own. Only what
// it cannot carry is changed: an integer field without an integer ("" or "N/A") is left out, a
// CurrentValue of digits becomes the integer and one of words the text, a composite's other keys
// are dropped, a boolean is written as text, a value of no field's kind (a list, say) is left out.
// Only the known fields at the top level are touched (no recursion: the size and depth of what is
// kept stay the chain's checks). The same for a UKMOTData's tests and extended rows.

import { VEHICLE_FIELDS } from '../contract/vehicle';

type Json = Record<string, unknown>;

const INTEGER_RE = /^-?\d{1,15}$/;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An integer given as a number or as its digits, or undefined ("", "N/A", 1.5). */
function integerOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === 'string' && INTEGER_RE.test(v.trim())) return Number(v.trim());
  return undefined;
}

/** A text the contract carries (a string, or a finite number), a boolean as its word, null; else undefined. */
function textOf(v: unknown): string | number | null | undefined {
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v;
  if (typeof v === 'boolean') return String(v);
  return v === null ? null : undefined;
}

/** A composite's two parts in the contract's types; other keys of it are dropped (no element carries them). */
function compositeOf(o: Json): Json {
  const out: Json = {};
  const current = integerOf(o.CurrentValue);
  if (current !== undefined || o.CurrentValue === null) out.CurrentValue = current ?? null;
  const text = textOf(o.CurrentTextValue);
  // A CurrentValue that is not an integer ("Manual") is the text, when the composite has none.
  const stray = current === undefined ? textOf(o.CurrentValue) : undefined;
  if (text !== undefined) out.CurrentTextValue = text;
  else if (stray !== undefined && stray !== null) out.CurrentTextValue = stray;
  return out;
}

/** An integer field: as it came when it is an integer (a number, or its digits), undefined when it holds none. */
function integerField(v: unknown): unknown {
  const raw = isObject(v) ? (v.CurrentValue ?? v.CurrentTextValue) : v;
  return integerOf(raw) === undefined ? undefined : raw;
}

function textField(v: unknown): unknown {
  return isObject(v) ? compositeOf(v) : textOf(v);
}

function compositeField(v: unknown): unknown {
  return isObject(v) ? compositeOf(v) : textOf(v);
}

const NORMALIZE = { integer: integerField, text: textField, composite: compositeField } as const;

/** A RegCheck vehicleJson object as a vehicle record in the contract's types (see the file's comment). */
export function normalizeRegcheckVehicle(raw: Readonly<Json>): Json {
  const out: Json = { ...raw };
  for (const [name, kind] of VEHICLE_FIELDS) {
    if (!Object.hasOwn(out, name)) continue;
    const value = NORMALIZE[kind](out[name]);
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

const MOT_TEST_TEXT = ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'];
const MOT_TEST_LISTS = ['FailureReasons', 'Advisories'];

/** A list of texts: numbers and booleans written as strings, nulls kept, anything else dropped. */
function textList(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map(textOf).filter((s) => s !== undefined);
}

/** One UKTest: its five texts and two lists, in the contract's types; keys no UKTest element carries are dropped. */
function motTest(t: Json): Json {
  const out: Json = {};
  for (const f of MOT_TEST_TEXT) {
    const s = textOf(t[f]);
    if (s !== undefined) out[f] = s;
  }
  for (const f of MOT_TEST_LISTS) if (t[f] !== undefined) out[f] = textList(t[f]);
  return out;
}

/**
 * A RegCheck UKMOTData (tests from Json, extendedInformation, taxDate) in the contract's types. A
 * list that is not a list, or a test that is not an object, is left as it came for the chain's
 * check to refuse: a malformed answer is a failure, not an empty history.
 */
export function normalizeRegcheckMot(raw: Readonly<Json>): Json {
  const out: Json = {};
  const tests = raw.tests;
  out.tests = Array.isArray(tests) ? (tests as unknown[]).map((t) => (isObject(t) ? motTest(t) : t)) : tests;
  const ext = raw.extendedInformation;
  if (ext !== undefined)
    out.extendedInformation = Array.isArray(ext) ? (ext as unknown[]).map((r) => textList(r)) : ext;
  const taxDate = textOf(raw.taxDate);
  if (typeof taxDate === 'string') out.taxDate = taxDate;
  return out;
}
