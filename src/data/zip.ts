// Reading the CSV files out of a ZIP archive, as Ukraine's Ministry of Internal Affairs publishes its
// register (one yearly ZIP holding one CSV: docs/data.md). Node has zlib but no ZIP reader; this one
// reads only what an import needs: the central directory at the archive's end (APPNOTE.TXT 4.3.12,
// 4.3.16, and its ZIP64 forms 4.3.14-4.3.15), then each chosen entry's data, stored or deflated,
// streamed through zlib and checked against its CRC-32. An archive from the network is hostile, so
// everything it declares is bounded before it is believed: the number of entries, the directory's
// size, an entry's size and its compression ratio, entries that overlap, and an entry that inflates
// to more than its directory says (a ZIP bomb) is stopped at that byte, not after.

import type { FileHandle } from 'node:fs/promises';
import zlib from 'node:zlib';

/** What an archive may declare at most; anything more is refused before a byte is inflated. */
export const ZIP_LIMITS = {
  /** Entries in the central directory (the register's ZIPs hold one). */
  entries: 1000,
  /** Bytes of the central directory. */
  directoryBytes: 1 << 20,
  /** Bytes an entry inflates to (a yearly CSV of the register is about 1 GB). */
  entryBytes: 2 ** 36,
  /** Inflated bytes per compressed byte (CSV text compresses 5-15 times; a ZIP bomb 1,000 and more). */
  ratio: 200,
};

/** Why an archive cannot be read (not a ZIP, damaged, encrypted, a ZIP bomb, ...), in one line. */
export class ZipError extends Error {}

export interface ZipEntry {
  readonly name: string;
  readonly method: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly size: number;
  /** Where the entry's local header starts. */
  readonly offset: number;
  /**
   * When the entry was last written, ms since the epoch, from its extended timestamp (UTC); null when it
   * has none (see `written`).
   */
  readonly writtenUtc: number | null;
  /** When the entry was last written as its MS-DOS date and time say it: the archiver's clock, no zone. */
  readonly written: { year: number; month: number; day: number; hour: number; minute: number; second: number };
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;
const MAX16 = 0xffff;
const MAX32 = 0xffffffff;
const READ_BYTES = 1 << 20;

/** Whether bytes begin as a ZIP archive does (a local header, or the end record of an empty one). */
export function isZip(head: Uint8Array): boolean {
  return (
    head.length >= 4 &&
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    (head[2] === 3 || head[2] === 5) &&
    head[3] === head[2] + 1
  );
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buf, got, length - got, position + got);
    if (bytesRead === 0) throw new ZipError('it is cut short (the archive ends before its directory says)');
    got += bytesRead;
  }
  return buf;
}

/** A 64-bit little-endian count, refused past what a number holds exactly. */
function u64(buf: Buffer, at: number): number {
  const v = buf.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('it declares a size or offset too large to be real');
  return Number(v);
}

interface Directory {
  readonly offset: number;
  readonly size: number;
  readonly entries: number;
}

/** The end of central directory record (and its ZIP64 form when the plain one says so). */
async function directoryOf(handle: FileHandle, fileSize: number): Promise<Directory> {
  const tail = Math.min(fileSize, 22 + MAX16 + 20);
  const buf = await readAt(handle, fileSize - tail, tail);
  let at = -1;
  for (let i = tail - 22; i >= 0; i--) {
    if (buf.readUInt32LE(i) === EOCD && i + 22 + buf.readUInt16LE(i + 20) <= tail) {
      at = i;
      break;
    }
  }
  if (at === -1) throw new ZipError('it is not a ZIP archive, or it is cut short (no end of central directory)');
  if (buf.readUInt16LE(at + 4) !== 0 && buf.readUInt16LE(at + 4) !== MAX16)
    throw new ZipError('it is split over several disks');
  let dir: Directory = {
    entries: buf.readUInt16LE(at + 10),
    size: buf.readUInt32LE(at + 12),
    offset: buf.readUInt32LE(at + 16),
  };
  if (
    (dir.entries === MAX16 || dir.size === MAX32 || dir.offset === MAX32) &&
    at >= 20 &&
    buf.readUInt32LE(at - 20) === ZIP64_LOCATOR
  ) {
    const where = u64(buf, at - 20 + 8);
    if (where + 56 > fileSize) throw new ZipError('its ZIP64 end record lies outside the file');
    const z = await readAt(handle, where, 56);
    if (z.readUInt32LE(0) !== ZIP64_EOCD) throw new ZipError('its ZIP64 end record is damaged');
    dir = { entries: u64(z, 32), size: u64(z, 40), offset: u64(z, 48) };
  }
  if (dir.entries > ZIP_LIMITS.entries)
    throw new ZipError(`it holds ${dir.entries} entries (at most ${ZIP_LIMITS.entries} are read)`);
  if (dir.size > ZIP_LIMITS.directoryBytes)
    throw new ZipError(`its directory is ${dir.size} bytes (at most ${ZIP_LIMITS.directoryBytes} are read)`);
  if (dir.offset + dir.size > fileSize) throw new ZipError('it is cut short (its directory lies past its end)');
  return dir;
}

/** The modification time of an entry's extended timestamp extra field (0x5455), ms since the epoch; null without. */
function extendedTime(extra: Buffer): number | null {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const len = extra.readUInt16LE(p + 2);
    // Its first byte says which times follow; bit 0: the modification time, seconds since the epoch (UTC).
    if (id === 0x5455 && len >= 5 && p + 9 <= extra.length && extra[p + 4] & 1) return extra.readUInt32LE(p + 5) * 1000;
    p += 4 + len;
  }
  return null;
}

/** The sizes and offset an entry's ZIP64 extra field holds in place of the 0xFFFFFFFF its record shows. */
function zip64Fields(extra: Buffer, sizes: { size: number; compressedSize: number; offset: number }): void {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const len = extra.readUInt16LE(p + 2);
    if (id === 0x0001) {
      let q = p + 4;
      const next = () => {
        if (q + 8 > p + 4 + len) throw new ZipError('an entry has a damaged ZIP64 field');
        const v = u64(extra, q);
        q += 8;
        return v;
      };
      if (sizes.size === MAX32) sizes.size = next();
      if (sizes.compressedSize === MAX32) sizes.compressedSize = next();
      if (sizes.offset === MAX32) sizes.offset = next();
      return;
    }
    p += 4 + len;
  }
}

const utf8 = new TextDecoder('utf-8');
// Names without the UTF-8 flag are in the archiver's OEM code page: IBM 866 for Ukrainian Windows.
const oem = new TextDecoder('ibm866');

/** One central directory record at `p`, checked; and where the next begins. */
function entryAt(cd: Buffer, p: number, dir: Directory): { entry: ZipEntry; next: number } {
  if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL) throw new ZipError('its central directory is damaged');
  const flags = cd.readUInt16LE(p + 8);
  const nameLen = cd.readUInt16LE(p + 28);
  const extraLen = cd.readUInt16LE(p + 30);
  const next = p + 46 + nameLen + extraLen + cd.readUInt16LE(p + 32);
  if (next > cd.length) throw new ZipError('its central directory is damaged');
  const rawName = cd.subarray(p + 46, p + 46 + nameLen);
  const name = (flags & 0x800 ? utf8 : oem).decode(rawName);
  const sizes = {
    compressedSize: cd.readUInt32LE(p + 20),
    size: cd.readUInt32LE(p + 24),
    offset: cd.readUInt32LE(p + 42),
  };
  const extra = cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
  zip64Fields(extra, sizes);
  // MS-DOS time and date: seconds / 2, minutes, hours; day, month, years since 1980.
  const [time, date] = [cd.readUInt16LE(p + 12), cd.readUInt16LE(p + 14)];
  const written = {
    year: 1980 + (date >> 9),
    month: (date >> 5) & 15,
    day: date & 31,
    hour: time >> 11,
    minute: (time >> 5) & 63,
    second: (time & 31) * 2,
  };
  const entry: ZipEntry = {
    name,
    method: cd.readUInt16LE(p + 10),
    crc32: cd.readUInt32LE(p + 16),
    ...sizes,
    writtenUtc: extendedTime(extra),
    written,
  };
  if (flags & 0x41) throw new ZipError(`${name} is encrypted`);
  if (entry.offset + 30 + entry.compressedSize > dir.offset)
    throw new ZipError(`${name} lies outside the archive's data`);
  return { entry, next };
}

/** Every entry of the archive's central directory, in its order, each checked against the limits. */
export async function zipEntries(handle: FileHandle, fileSize: number): Promise<ZipEntry[]> {
  const dir = await directoryOf(handle, fileSize);
  const cd = await readAt(handle, dir.offset, dir.size);
  const entries: ZipEntry[] = [];
  for (let p = 0, i = 0; i < dir.entries; i++) {
    const { entry, next } = entryAt(cd, p, dir);
    entries.push(entry);
    p = next;
  }
  return entries;
}

/** Whether an entry is a file rather than a folder. */
const isFile = (e: ZipEntry) => !e.name.endsWith('/') && !e.name.endsWith('\\');

/** `.csv` at the end of a name, the c or the s possibly a Cyrillic look-alike (a published file is named `.сsv`). */
const CSV_NAME_RE = /\.[cс][sѕ]v$/iu;

/**
 * The entries an import reads: the archive's one file whatever its name, or, when it holds several,
 * those named .csv; refused when there is none, or when two of them share bytes (an overlap bomb).
 */
export function csvEntries(entries: readonly ZipEntry[]): ZipEntry[] {
  const files = entries.filter(isFile);
  const chosen = files.length === 1 ? files : files.filter((e) => CSV_NAME_RE.test(e.name));
  if (chosen.length === 0)
    throw new ZipError(
      `it holds no CSV file (${
        files.length
          ? files
              .map((e) => e.name)
              .slice(0, 5)
              .join(', ')
          : 'no file at all'
      })`,
    );
  const byOffset = [...chosen].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1];
    if (prev.offset + 30 + prev.compressedSize > byOffset[i].offset)
      throw new ZipError(`${prev.name} and ${byOffset[i].name} overlap`);
  }
  for (const e of chosen) checkDeclared(e);
  return chosen;
}

/** What an entry declares, against ZIP_LIMITS and the methods read here. */
function checkDeclared(e: ZipEntry): void {
  if (e.method !== STORED && e.method !== DEFLATED)
    throw new ZipError(
      `${e.name} is compressed with method ${e.method}${e.method === 9 ? ' (Deflate64)' : ''}; only stored and deflated entries are read`,
    );
  if (e.size > ZIP_LIMITS.entryBytes)
    throw new ZipError(`${e.name} is ${e.size} bytes inflated (at most ${ZIP_LIMITS.entryBytes} are read)`);
  if (e.method === STORED && e.size !== e.compressedSize)
    throw new ZipError(`${e.name} is damaged (stored, yet its two sizes differ)`);
  if (e.size > Math.max(e.compressedSize, 1) * ZIP_LIMITS.ratio)
    throw new ZipError(
      `${e.name} would inflate ${Math.round(e.size / Math.max(e.compressedSize, 1))} times (at most ${ZIP_LIMITS.ratio}): a ZIP bomb, or not a register's file`,
    );
}

/** The entry's compressed bytes, read from the file a chunk at a time (each chunk a fresh buffer). */
async function* rawBytes(
  handle: FileHandle,
  start: number,
  length: number,
  onBytes?: (n: number) => void,
): AsyncGenerator<Buffer> {
  for (let done = 0; done < length;) {
    const n = Math.min(READ_BYTES, length - done);
    const buf = await readAt(handle, start + done, n);
    done += n;
    onBytes?.(n);
    yield buf;
  }
}

/**
 * An entry's bytes as stored in the archive before compression, streamed; `onBytes` is told the
 * compressed bytes read. Throws ZipError when they do not match what the directory declares: more
 * bytes than its size (stopped there), fewer, or another CRC-32.
 */
export async function* zipEntryBytes(
  handle: FileHandle,
  entry: ZipEntry,
  onBytes?: (n: number) => void,
): AsyncGenerator<Uint8Array> {
  checkDeclared(entry);
  const local = await readAt(handle, entry.offset, 30);
  if (local.readUInt32LE(0) !== LOCAL)
    throw new ZipError(`${entry.name} is damaged (no local header where the directory points)`);
  if (local.readUInt16LE(6) & 0x41) throw new ZipError(`${entry.name} is encrypted`);
  if (local.readUInt16LE(8) !== entry.method) throw new ZipError(`${entry.name} is damaged (its two headers disagree)`);
  const start = entry.offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const raw = rawBytes(handle, start, entry.compressedSize, onBytes);
  let out = 0;
  let crc = 0;
  const counted = (b: Uint8Array): Uint8Array => {
    out += b.length;
    if (out > entry.size)
      throw new ZipError(
        `${entry.name} inflates to more than the ${entry.size} bytes its directory gives (a ZIP bomb, or damaged)`,
      );
    crc = zlib.crc32(b, crc);
    return b;
  };
  if (entry.method === STORED) for await (const b of raw) yield counted(b);
  else for await (const b of inflateRaw(raw, entry.name)) yield counted(b);
  if (out !== entry.size)
    throw new ZipError(`${entry.name} is damaged (${out} bytes where its directory gives ${entry.size})`);
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new ZipError(`${entry.name} is damaged (its CRC-32 does not match)`);
}

/** Raw deflate data inflated as it is read; a consumer that stops early stops the reading too. */
async function* inflateRaw(input: AsyncGenerator<Buffer>, name: string): AsyncGenerator<Buffer> {
  // Output in runs of up to 1 MiB, as a file is read: each becomes one run of rows for a thread.
  const inflate = zlib.createInflateRaw({ chunkSize: 1 << 20 });
  const feed = (async () => {
    for await (const chunk of input) {
      if (inflate.destroyed) return;
      // 'close' as well: a consumer that stops early destroys the stream, which drains no more.
      if (!inflate.write(chunk))
        await new Promise<void>((resolve) => {
          inflate.once('drain', resolve);
          inflate.once('close', resolve);
        });
    }
    inflate.end();
  })().catch((e: Error) => inflate.destroy(e));
  try {
    for await (const out of inflate as AsyncIterable<Buffer>) yield out;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (e instanceof ZipError) throw e;
    if (typeof err.code === 'string' && err.code.startsWith('Z_'))
      throw new ZipError(`${name} is damaged (${err.message})`);
    throw e;
  } finally {
    inflate.destroy();
    await input.return(undefined);
    await feed;
  }
}
