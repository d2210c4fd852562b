// The README read as a specification: its tables parsed by their header names, so that a test
// holds the code to what the README says (and keeps holding as rows are added), never to the
// code's own tables.

import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
/** The pages of the documentation: the README (the door) and docs/, one page a topic. */
export const DOC_PAGES: readonly string[] = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
/**
 * The documentation as one text: the README, then each page of docs/. Each page's sections keep
 * their headings, so a section is found by its title whichever page holds it.
 */
export const README = DOC_PAGES.map((p) => fs.readFileSync(path.join(ROOT, p), 'utf8')).join('\n\n');

export interface Table {
  /** The nearest heading above the table. */
  readonly heading: string;
  readonly headers: readonly string[];
  /** Each row by header name, cells trimmed (backticks kept). */
  readonly rows: ReadonlyArray<Readonly<Record<string, string>>>;
}

/** The cells of one table line: split on unescaped pipes, the outer empty cells dropped. */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** Every pipe table of a markdown text, with the heading it sits under. */
export function tablesOf(text: string): Table[] {
  const lines = text.split('\n');
  const tables: Table[] = [];
  let heading = '';
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) heading = h[1].trim();
    if (!line.startsWith('|') || !/^\|[\s|:-]+\|$/.test((lines[i + 1] ?? '').trim())) continue;
    const headers = cells(line);
    const rows: Record<string, string>[] = [];
    let j = i + 2;
    for (; j < lines.length && lines[j].startsWith('|'); j++) {
      const c = cells(lines[j]);
      const row: Record<string, string> = {};
      headers.forEach((name, k) => (row[name] = c[k] ?? ''));
      rows.push(row);
    }
    tables.push({ heading, headers, rows });
    i = j - 1;
  }
  return tables;
}

/** The README's one table with all these headers; fails loudly when there is none. */
export function readmeTable(...headers: string[]): Table {
  const found = tablesOf(README).filter((t) => headers.every((h) => t.headers.includes(h)));
  if (found.length === 0) throw new Error(`the README has no table with the columns ${headers.join(', ')}`);
  return found[0];
}

/** Every README table with these headers (the Configuration and the Limits tables both have Variable and Default). */
export function readmeTables(...headers: string[]): Table[] {
  return tablesOf(README).filter((t) => headers.every((h) => t.headers.includes(h)));
}

/** `text` -> text; a cell with several backticked values gives the first. */
export function unquote(cell: string): string {
  const m = /`([^`]*)`/.exec(cell);
  return m ? m[1] : cell.trim();
}

/** Every backticked value of a cell, in order. */
export function quoted(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
}

/** The README's section under a heading (to its next heading of the same or a higher level). */
export function readmeSection(title: string): string {
  const lines = README.split('\n');
  const start = lines.findIndex((l) =>
    new RegExp(`^#{1,6}\\s+${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`).test(l),
  );
  if (start === -1) throw new Error(`the README has no section '${title}'`);
  const level = /^(#+)/.exec(lines[start])![1].length;
  let end = start + 1;
  while (end < lines.length && !(/^(#+)\s/.test(lines[end]) && /^(#+)/.exec(lines[end])![1].length <= level)) end++;
  return lines.slice(start + 1, end).join('\n');
}

/** One README claim, matched by a pattern with capture groups; fails loudly when the README no longer says it. */
export function claim(pattern: RegExp, text = README): RegExpExecArray {
  const m = pattern.exec(text.replace(/\s+/g, ' '));
  if (!m) throw new Error(`the README no longer says ${pattern}`);
  return m;
}

/** What the README's error table says of one code, as a caller sees it on each transport. */
export interface DocumentedError {
  readonly code: string;
  /** The HTTP status of the GET/POST answer. */
  readonly status: number;
  /** The HTTP status of a SOAP fault. */
  readonly soapStatus: number;
  /** SOAP 1.1 faultcode, e.g. soap:Client. */
  readonly faultcode11: string;
  /** SOAP 1.2 Code/Value, e.g. soap:Sender. */
  readonly code12: string;
  /** The row says the answer carries a Retry-After. */
  readonly retryAfter: boolean;
}

const ERROR_COLUMNS = ['Code', 'HTTP', 'SOAP 1.1 faultcode', 'SOAP 1.2 Code'] as const;

/**
 * The README's error table by code. SOAP's status comes from the sentence above it ("SOAP answers HTTP 500 (413 for an
 * oversize body)").
 */
export function documentedErrors(): ReadonlyMap<string, DocumentedError> {
  const [, soapDefault, soapOversize] = claim(/SOAP answers HTTP (\d{3}) \((\d{3}) for an oversize body\)/);
  const out = new Map<string, DocumentedError>();
  for (const row of readmeTable(...ERROR_COLUMNS).rows) {
    const code = unquote(row.Code);
    const status = Number(row.HTTP);
    if (!/^[A-Z_]+$/.test(code) || !Number.isInteger(status))
      throw new Error(`a malformed error row: ${JSON.stringify(row)}`);
    const faultcode11 = unquote(row['SOAP 1.1 faultcode']);
    const code12 = unquote(row['SOAP 1.2 Code']);
    if (!/^soap:\w+$/.test(faultcode11) || !/^soap:\w+$/.test(code12))
      throw new Error(`the error row for ${code} lacks its SOAP codes: ${JSON.stringify(row)}`);
    const retryAfter = /`Retry-After`/.test(row.When ?? '') && !/\bno `Retry-After`/.test(row.When ?? '');
    out.set(code, {
      code,
      status,
      soapStatus: String(status) === soapOversize ? Number(soapOversize) : Number(soapDefault),
      faultcode11,
      code12,
      retryAfter,
    });
  }
  return out;
}

export function documentedError(code: string): DocumentedError {
  const e = documentedErrors().get(code);
  if (!e) throw new Error(`the README's error table has no row for ${code}`);
  return e;
}
