// CSV as RDW's bulk downloads write it (RFC 4180): comma-separated, fields in double quotes when
// they hold a comma, a quote (doubled) or a line break; CRLF or LF; a UTF-8 BOM at the start. Two
// halves: cutting a byte stream into runs of whole rows (a line break inside quotes is not a row's
// end), and parsing a run's text into rows, with a fast path for rows without quotes.

import { joined } from './chunk';

/** The longest row read as one; a longer one (most likely a quote never closed) stops the import. */
const MAX_ROW_BYTES = 4 << 20;

export class CsvInputError extends Error {}

/**
 * The runs of whole rows of a byte stream, each a fresh copy, one a chunk read. A row ends at a
 * line feed outside quotes; whether a byte is inside quotes is known by counting quote bytes from
 * the start (a doubled quote counts twice and changes nothing), which UTF-8 lets us do on bytes.
 */
export async function* csvRuns(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  let partial: Uint8Array[] = [];
  let partialBytes = 0;
  let inQuotes = false;
  let first = true;
  for await (const raw of input) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    if (first && chunk.length > 0) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    // One pass over the bytes: a quote toggles, a line feed outside quotes is where a run may end.
    // (A search per quote would scan back from each to the line feed before it: rows of quoted
    // fields, as Ukraine's register writes them, made that the import's largest cost.)
    let cut = -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 34) inQuotes = !inQuotes;
      else if (c === 10 && !inQuotes) cut = i;
    }
    if (cut === -1) {
      partial.push(chunk.slice());
      partialBytes += chunk.length;
      if (partialBytes > MAX_ROW_BYTES)
        throw new CsvInputError(`a row is longer than ${MAX_ROW_BYTES} bytes (is a quoted field never closed?)`);
      continue;
    }
    yield joined([...partial, chunk.subarray(0, cut + 1)], partialBytes + cut + 1);
    partial = cut + 1 < chunk.length ? [chunk.slice(cut + 1)] : [];
    partialBytes = chunk.length - cut - 1;
    if (partialBytes > MAX_ROW_BYTES)
      throw new CsvInputError(`a row is longer than ${MAX_ROW_BYTES} bytes (is a quoted field never closed?)`);
  }
  if (partialBytes > 0) yield joined(partial, partialBytes);
}

/** The reason given for the row where a quoted field opens and the input ends before it closes. */
export const UNCLOSED_QUOTE = 'unclosed quote: a quoted field opens on this line and is never closed';

/**
 * Calls `onRow` with each row of `text` (whole rows, as csvRuns cuts them), its fields unquoted;
 * an empty line is a row of one empty field. A quote inside an unquoted field is taken as text.
 * Fields are separated by commas, or by `separator` (Ukraine's register writes `;`). A quoted field
 * still open at the end of `text` (csvRuns cuts only outside quotes, so the input ends inside it)
 * calls `onUnclosed` in place of that row, when given; without it the field runs to the end.
 */
export function eachCsvRow(
  text: string,
  onRow: (fields: string[]) => void,
  separator = ',',
  onUnclosed?: () => void,
): void {
  let pos = 0;
  const n = text.length;
  // The next quote at or after pos, found once and not again for every row before it.
  let quote = -2;
  while (pos < n) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = n;
    if (quote !== -1 && quote < pos) quote = text.indexOf('"', pos);
    if (quote === -1 || quote > nl) {
      const end = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      onRow(text.slice(pos, end).split(separator));
      pos = nl + 1;
      continue;
    }
    const end = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    const fields = everyFieldQuoted(text, pos, end, separator);
    if (fields) {
      onRow(fields);
      pos = nl + 1;
      continue;
    }
    pos = quotedRow(text, pos, onRow, separator.charCodeAt(0), onUnclosed);
  }
}

/**
 * The fields of the line from `pos` to `end` when it is a whole row with every field in quotes and
 * no quote inside one (`"a";"b;c";""`, as Ukraine's register writes every row from 2019), else
 * null, for quotedRow to read it: cut at `";"` with no field left holding a quote, the line can be
 * read no other way.
 */
function everyFieldQuoted(text: string, pos: number, end: number, separator: string): string[] | null {
  if (end - pos < 2 || text.charCodeAt(pos) !== 34 || text.charCodeAt(end - 1) !== 34) return null;
  const fields = text.slice(pos + 1, end - 1).split(`"${separator}"`);
  for (const f of fields) if (f.includes('"')) return null;
  return fields;
}

/** One row holding quotes, from `pos` (`separator` as a char code); returns where the next row starts. */
function quotedRow(
  text: string,
  pos: number,
  onRow: (fields: string[]) => void,
  separator: number,
  onUnclosed?: () => void,
): number {
  const fields: string[] = [];
  const n = text.length;
  let field = '';
  let i = pos;
  for (;;) {
    if (text.charCodeAt(i) === 34 /* " */) {
      // A quoted field: up to the quote not followed by another.
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1 && onUnclosed) {
          onUnclosed();
          return n;
        }
        if (q === -1) {
          field += text.slice(i);
          i = n;
          break;
        }
        field += text.slice(i, q);
        if (text.charCodeAt(q + 1) === 34) {
          field += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
    }
    // The rest of the field, unquoted, up to a separator or the row's end.
    let j = i;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === separator || c === 10) break;
      j++;
    }
    let rest = text.slice(i, j);
    if (j < n && text.charCodeAt(j) === 10 && rest.endsWith('\r')) rest = rest.slice(0, -1);
    else if (j >= n && rest.endsWith('\r')) rest = rest.slice(0, -1);
    field += rest;
    fields.push(field);
    field = '';
    if (j >= n || text.charCodeAt(j) === 10) {
      onRow(fields);
      return j + 1;
    }
    i = j + 1;
  }
}
