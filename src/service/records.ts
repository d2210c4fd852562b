// What a stored vehicle or MOT history looks like, checked once at import, and how it becomes the
// result's element tree (spec sections 2.1-2.4). The tree is protocol-neutral: transport/xml.ts
// writes it as a SOAP body or as an HTTP-form document.

import type { ResultKind } from '../contract/operations';
import { VEHICLE_FIELDS, type FieldKind } from '../contract/vehicle';

/** An element of a result. `absent` marks a value the record lacks (xsi:nil in SOAP). */
export interface XNode {
  readonly name: string;
  readonly text?: string;
  readonly children?: readonly XNode[];
  readonly absent?: boolean;
}

const MOT_TEST_FIELDS = ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'] as const;
const MOT_TEST_LISTS = ['FailureReasons', 'Advisories'] as const;
/**
 * The keys an MOT history and an MOT test may hold: anything else is refused (a misspelling would vanish from the
 * answer).
 */
const MOT_KEYS: readonly string[] = ['make', 'model', 'taxDate', 'tests', 'extendedInformation'];
const MOT_TEST_KEYS: readonly string[] = [...MOT_TEST_FIELDS, ...MOT_TEST_LISTS];

/**
 * Why an object holds a key it may not, or null: names the first unknown key, and the allowed
 * spelling when the key differs from one only in case ("taxdate" -> "taxDate").
 */
export function unknownKeyProblem(
  where: string,
  o: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): string | null {
  for (const k in o) {
    if (allowed.includes(k)) continue;
    const lower = k.toLowerCase();
    const near = allowed.find((a) => a.toLowerCase() === lower);
    const shown = JSON.stringify(k.length > 40 ? k.slice(0, 40) + '...' : k);
    return near
      ? `unknown key ${shown} in ${where} (did you mean "${near}"? keys are case-sensitive)`
      : `unknown key ${shown} in ${where} (allowed: ${allowed.join(', ')})`;
  }
  return null;
}

const MAX_TEXT = 8192;
// Characters XML 1.0 cannot carry, even escaped; a record holding one could not be answered.
const NOT_XML_RE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isIntegerLike(v: unknown): boolean {
  return (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,15}$/.test(v.trim()));
}

const PLAIN_SPOILER_RE = /\\[ubf]|[\ud800-\udfff\ufffe\uffff]/;

/**
 * Whether every string inside the JSON text `source` is known, from the text alone, to be at most
 * MAX_TEXT characters and free of characters XML cannot carry: the text is that short, holds no
 * escape that could make such a character (\u, \b, \f), no surrogate and no U+FFFE/U+FFFF (JSON
 * itself forbids raw control characters in strings). Then the checks below need not look at each
 * string: an import's line is checked once instead of once a value. A false answer costs nothing
 * but the per-value checks.
 */
export function plainJsonText(source: string): boolean {
  return source.length <= MAX_TEXT && !PLAIN_SPOILER_RE.test(source);
}

/** `plain`: see plainJsonText; only the value's type is left to check. */
function textProblem(where: string, v: unknown, plain = false): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? null : `${where} must be a finite number`;
  if (typeof v !== 'string') return `${where} must be a string or a number`;
  if (plain) return null;
  if (v.length > MAX_TEXT) return `${where} is longer than ${MAX_TEXT} characters`;
  if (NOT_XML_RE.test(v)) return `${where} holds a character XML cannot carry`;
  return null;
}

/** Why this vehicle object cannot be imported, or null when it can (its first problem); `plain`: see plainJsonText. */
export function vehicleProblem(v: unknown, plain = false): string | null {
  return vehicleProblems(v, plain)[0] ?? null;
}

/** Every reason this vehicle object cannot be imported, in field order (empty when it can). */
export function vehicleProblems(v: unknown, plain = false): string[] {
  if (v === undefined) return ['"vehicle" is missing (the vehicle\'s fields, a JSON object)'];
  if (!isObject(v)) return ['"vehicle" must be a JSON object'];
  const out: string[] = [];
  for (const [name, kind] of VEHICLE_FIELDS) {
    if (!(name in v) || v[name] === null) continue;
    const p = fieldProblem(name, kind, v[name], plain);
    if (p) out.push(p);
  }
  return out;
}

function fieldProblem(name: string, kind: FieldKind, value: Json, plain: boolean): string | null {
  const where = `vehicle.${name}`;
  if (kind === 'integer') return isIntegerLike(value) ? null : `${where} must be an integer`;
  if (kind === 'text') {
    const inner = isObject(value) ? value.CurrentTextValue : value;
    if (isObject(value) && Object.keys(value).some((k) => k !== 'CurrentTextValue' && k !== 'CurrentValue')) {
      return `${where} may only hold CurrentValue and CurrentTextValue`;
    }
    if (inner === null || inner === undefined) return null;
    return textProblem(isObject(value) ? `${where}.CurrentTextValue` : where, inner, plain);
  }
  if (isObject(value)) {
    const extra = Object.keys(value).find((k) => k !== 'CurrentValue' && k !== 'CurrentTextValue');
    if (extra) return `${where} has an unknown key "${extra}" (a composite holds CurrentValue and CurrentTextValue)`;
    const cv = value.CurrentValue;
    if (cv !== undefined && cv !== null && !(typeof cv === 'number' && Number.isSafeInteger(cv))) {
      return `${where}.CurrentValue must be an integer or null`;
    }
    const ct = value.CurrentTextValue;
    return ct !== undefined && ct !== null ? textProblem(`${where}.CurrentTextValue`, ct, plain) : null;
  }
  const p = textProblem(where, value, plain);
  return p ? `${p} (or a composite {"CurrentValue":int|null,"CurrentTextValue":string})` : null;
}

function textOf(v: Json | undefined): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v;
  if (isObject(v)) return textOf(v.CurrentTextValue);
  return undefined;
}

function integerOf(v: Json | undefined): string | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && /^-?\d{1,15}$/.test(v.trim())) return String(parseInt(v.trim(), 10));
  if (isObject(v)) return integerOf(v.CurrentValue) ?? integerOf(v.CurrentTextValue);
  return undefined;
}

function composite(name: string, v: Json | undefined): XNode {
  let current: string | undefined;
  let text: string | undefined;
  if (isObject(v)) {
    current = integerOf(v.CurrentValue);
    text = textOf(v.CurrentTextValue);
  } else {
    text = textOf(v);
  }
  return {
    name,
    children: [
      current === undefined ? { name: 'CurrentValue', absent: true } : { name: 'CurrentValue', text: current },
      text === undefined ? { name: 'CurrentTextValue', absent: true } : { name: 'CurrentTextValue', text },
    ],
  };
}

/** The children of a Vehicle result: vehicleJson, then vehicleData in spec order. */
function vehicleNodes(payload: string, value?: unknown): XNode[] {
  const v = (value ?? JSON.parse(payload)) as JsonObject;
  const data: XNode[] = [];
  for (const [name, kind] of VEHICLE_FIELDS) {
    const value = v[name];
    if (kind === 'composite') {
      data.push(composite(name, value));
      continue;
    }
    const text = kind === 'integer' ? integerOf(value) : textOf(value);
    if (text !== undefined) data.push({ name, text });
  }
  return [
    { name: 'vehicleJson', text: payload },
    { name: 'vehicleData', children: data },
  ];
}

function stringList(where: string, v: unknown, plain: boolean): string | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) return `${where} must be an array of strings`;
  for (let i = 0; i < v.length; i++) {
    const p = textProblem(`${where}[${i}]`, v[i], plain);
    if (p) return p;
  }
  return null;
}

/** Why this MOT object cannot be imported, or null when it can (its first problem); `plain`: see plainJsonText. */
export function motProblem(m: unknown, plain = false): string | null {
  return motProblems(m, plain)[0] ?? null;
}

/** Every reason this MOT object cannot be imported (the first of each test; empty when it can). */
export function motProblems(m: unknown, plain = false): string[] {
  if (m === undefined) return ['"mot" is missing (the MOT history, a JSON object)'];
  if (!isObject(m)) return ['"mot" must be a JSON object'];
  const out: string[] = [];
  const push = (p: string | null) => {
    if (p) out.push(p);
  };
  push(unknownKeyProblem('"mot"', m, MOT_KEYS));
  for (const key of ['make', 'model', 'taxDate']) {
    if (m[key] !== undefined && m[key] !== null) push(textProblem(`mot.${key}`, m[key], plain));
  }
  if (m.tests !== undefined && m.tests !== null) {
    if (!Array.isArray(m.tests)) out.push('mot.tests must be an array');
    else for (let i = 0; i < m.tests.length; i++) push(motTestProblem(m.tests[i], `mot.tests[${i}]`, plain));
  }
  const ext = m.extendedInformation;
  if (ext !== undefined && ext !== null) {
    if (!Array.isArray(ext)) out.push('mot.extendedInformation must be an array of arrays of strings');
    else for (let i = 0; i < ext.length; i++) push(stringList(`mot.extendedInformation[${i}]`, ext[i], plain));
  }
  return out;
}

function motTestProblem(t: Json, where: string, plain: boolean): string | null {
  if (!isObject(t)) return `${where} must be an object`;
  const unknownInTest = unknownKeyProblem(where, t, MOT_TEST_KEYS);
  if (unknownInTest) return unknownInTest;
  for (const f of MOT_TEST_FIELDS) {
    if (t[f] !== undefined && t[f] !== null) {
      const p = textProblem(`${where}.${f}`, t[f], plain);
      if (p) return p;
    }
  }
  for (const f of MOT_TEST_LISTS) {
    const p = stringList(`${where}.${f}`, t[f], plain);
    if (p) return p;
  }
  return null;
}

interface MotHistory {
  make?: string;
  model?: string;
  taxDate?: string;
  tests?: JsonObject[];
  extendedInformation?: Json[][];
}

export function parseMot(payload: string): MotHistory {
  return JSON.parse(payload) as MotHistory;
}

function listNode(name: string, items: Json[] | undefined | null): XNode {
  return {
    name,
    children: (items ?? []).map((s) =>
      s === null ? { name: 'string', absent: true } : { name: 'string', text: textOf(s) ?? '' },
    ),
  };
}

/** The children of a UKMOTData result, in spec order. */
function motNodes(mot: MotHistory): XNode[] {
  const tests = mot.tests ?? [];
  const ext = mot.extendedInformation ?? [];
  const nodes: XNode[] = [
    {
      name: 'Tests',
      children: tests.map((t) => ({
        name: 'UKTest',
        children: [
          ...MOT_TEST_FIELDS.flatMap((f) => {
            const text = textOf(t[f]);
            return text === undefined ? [] : [{ name: f, text }];
          }),
          ...MOT_TEST_LISTS.map((f) => listNode(f, t[f] as Json[] | undefined)),
        ],
      })),
    },
  ];
  if (mot.taxDate !== undefined && mot.taxDate !== null) nodes.push({ name: 'taxDate', text: String(mot.taxDate) });
  nodes.push({ name: 'Json', text: JSON.stringify(tests) });
  nodes.push({ name: 'ExtendedInformation', children: ext.map((row) => ({ ...listNode('ArrayOfString', row) })) });
  nodes.push({ name: 'ExtendedInformationJson', text: JSON.stringify(ext) });
  return nodes;
}

/**
 * The children of an operation's result element, from the stored payload; `value`, when given, is
 * JSON.parse(payload) already made (an import has it from the line), so it is not parsed twice.
 */
export function resultNodes(kind: ResultKind, payload: string, value?: unknown): XNode[] {
  return kind === 'UKMOTData'
    ? motNodes((value as MotHistory | undefined) ?? parseMot(payload))
    : vehicleNodes(payload, value);
}

/** UKMOT's optional Model: matches the record's make, its model, or both together, ignoring case and spaces. */
export function modelMatches(mot: MotHistory, model: string): boolean {
  const fold = (s: string) => s.replace(/\s+/g, '').toUpperCase();
  const wanted = fold(model);
  const parts = [mot.make, mot.model].filter((s): s is string => typeof s === 'string' && s.trim() !== '');
  if (parts.length === 0 || wanted === '') return true;
  const candidates = parts.length === 2 ? [...parts, parts.join('')] : parts;
  return candidates.some((c) => fold(c) === wanted);
}
