// The ZIP reader an import of Ukraine's register uses (src/data/zip.ts), against archives written by
// another implementation: Python's zipfile module (stored, deflated, ZIP64, several entries, names
// in UTF-8 or in the DOS code page), its bytes compared with what zipfile itself reads back. Hostile
// archives are those archives with a field changed where APPNOTE.TXT puts it: a CRC-32, a declared
// size, a method, the encryption flag, an entry count; and a real high-ratio entry (a ZIP bomb's
// shape). Each must be refused with its reason before or at the byte it goes wrong, nothing more read.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { csvEntries, isZip, ZipError, zipEntries, zipEntryBytes, ZIP_LIMITS, type ZipEntry } from '../../src/data/zip';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-zip-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs a Python script with `out` (the archive's path) as its argument; returns its standard output. */
function python(script: string, out: string): string {
  const r = spawnSync('python3', ['-c', script, out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

/** An archive of `files` (name -> text) made by zipfile with `compression` and options. */
function makeZip(name: string, files: Record<string, string>, opts: { method?: string; zip64?: boolean } = {}): string {
  const out = path.join(dir, name);
  python(
    `import sys, json, zipfile
files = json.loads(${JSON.stringify(JSON.stringify(files))})
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.${opts.method ?? 'ZIP_DEFLATED'}) as z:
    for n, t in files.items():
        with z.open(n, 'w', force_zip64=${opts.zip64 ? 'True' : 'False'}) as f:
            f.write(t.encode('utf-8'))`,
    out,
  );
  return out;
}

async function readAll(file: string): Promise<{ entries: ZipEntry[]; texts: string[] }> {
  const h = await fs.promises.open(file, 'r');
  try {
    const entries = csvEntries(await zipEntries(h, (await h.stat()).size));
    const texts: string[] = [];
    for (const e of entries) {
      const parts: Buffer[] = [];
      for await (const b of zipEntryBytes(h, e)) parts.push(Buffer.from(b));
      texts.push(Buffer.concat(parts).toString('utf8'));
    }
    return { entries, texts };
  } finally {
    await h.close();
  }
}

/** What zipfile itself reads from the archive: each entry's text. */
function pythonReads(file: string): Record<string, string> {
  return JSON.parse(
    python(
      `import sys, json, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps({i.filename: z.read(i).decode('utf-8') for i in z.infolist()}))`,
      file,
    ),
  ) as Record<string, string>;
}

/** Rows that vary as the register's do (a file of one row repeated compresses like a ZIP bomb). */
const CSV =
  'PERSON;D_REG;BRAND;CAPACITY;N_REG_NEW\n' +
  Array.from(
    { length: 2000 },
    (_, i) =>
      `P;${String((i % 28) + 1).padStart(2, '0')}.01.25;TESLA;${(i * 7919) % 3000};АА${String(i * 37).padStart(4, '0')}РС`,
  ).join('\n') +
  '\n';

describe('archives another implementation wrote', () => {
  test.each([
    ['deflated', {}],
    ['stored', { method: 'ZIP_STORED' }],
    ['deflated, ZIP64 records', { zip64: true }],
  ])('%s: the entry reads as zipfile reads it', async (_, opts) => {
    const file = makeZip(`one-${_.replace(/\W+/g, '-')}.zip`, { 'reestrtz2025.csv': CSV }, opts);
    const fromPython = pythonReads(file);
    const { entries, texts } = await readAll(file);
    expect(entries.map((e) => e.name)).toEqual(['reestrtz2025.csv']);
    expect(texts).toEqual([fromPython['reestrtz2025.csv']]);
  });

  test('a ZIP64 archive made by zipfile has the ZIP64 end record this reader follows', () => {
    const file = makeZip('z64.zip', { 'a.csv': 'x\n' }, { zip64: true });
    const bytes = fs.readFileSync(file);
    // The local header's ZIP64 extra field (id 0x0001), as force_zip64 writes it: the case under test is real.
    expect(bytes.indexOf(Buffer.from([0x01, 0x00, 0x10, 0x00]))).toBeGreaterThan(0);
  });

  test('an archive of several files: its .csv files in order, the rest left alone; the one file of an archive whatever its name', async () => {
    const several = makeZip('several.zip', { 'readme.txt': 'not data', 'b.csv': 'B\n', 'a.CSV': 'A\n', 'dir/': '' });
    expect((await readAll(several)).texts).toEqual(['B\n', 'A\n']);
    // The 2019 file is published as `.сsv`, a Cyrillic с.
    const homoglyph = makeZip('homoglyph.zip', { 'tz_opendata_z01012019_po01012020.сsv': 'H\n', 'note.txt': '' });
    expect((await readAll(homoglyph)).entries.map((e) => e.name)).toEqual(['tz_opendata_z01012019_po01012020.сsv']);
    const single = makeZip('single.zip', { 'data.txt': 'S\n' });
    expect((await readAll(single)).texts).toEqual(['S\n']);
    const none = makeZip('none.zip', { 'a.txt': '', 'b.txt': '' });
    await expect(readAll(none)).rejects.toThrow('it holds no CSV file (a.txt, b.txt)');
  });

  test('a name without the UTF-8 flag is read in the DOS code page (IBM 866), as Ukrainian Windows archivers write it', async () => {
    const out = path.join(dir, 'cp866.zip');
    python(
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('xxxxxx.csv', 'R\\n')
# zipfile writes a name it cannot write in ASCII as UTF-8 with the flag: the OEM bytes are put in after.
b = open(sys.argv[1], 'rb').read().replace(b'xxxxxx.csv', 'реєстр.csv'.encode('cp866'))
open(sys.argv[1], 'wb').write(b)`,
      out,
    );
    const { entries, texts } = await readAll(out);
    expect(entries[0].name).toBe('реєстр.csv');
    expect(texts).toEqual(['R\n']);
  });

  test('isZip knows an archive by its first bytes, and nothing else', () => {
    expect(isZip(fs.readFileSync(makeZip('magic.zip', { 'a.csv': 'a\n' })).subarray(0, 4))).toBe(true);
    expect(isZip(Buffer.from('PERSON;D_REG\n'))).toBe(false);
    expect(isZip(Buffer.from([0x1f, 0x8b, 8, 0]))).toBe(false);
  });
});

/** The offset of the central directory record of the archive's first entry. */
function centralAt(bytes: Buffer): number {
  return bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
}

/** A copy of a deflated one-entry archive with `change` made to its bytes. */
function altered(name: string, change: (b: Buffer) => void): string {
  const bytes = fs.readFileSync(makeZip(`${name}-src.zip`, { 'reestrtz2025.csv': CSV }));
  change(bytes);
  const out = path.join(dir, `${name}.zip`);
  fs.writeFileSync(out, bytes);
  return out;
}

describe('hostile or damaged archives are refused, with the reason', () => {
  test('a CRC-32 that does not match the data', async () => {
    const file = altered('crc', (b) => b.writeUInt32LE(b.readUInt32LE(centralAt(b) + 16) ^ 1, centralAt(b) + 16));
    await expect(readAll(file)).rejects.toThrow('reestrtz2025.csv is damaged (its CRC-32 does not match)');
  });

  test('an entry that inflates to more than its directory says is stopped at that byte (a ZIP bomb)', async () => {
    const file = altered('bigger', (b) => b.writeUInt32LE(1000, centralAt(b) + 24));
    const h = await fs.promises.open(file, 'r');
    try {
      const [entry] = csvEntries(await zipEntries(h, (await h.stat()).size));
      let out = 0;
      await expect(
        (async () => {
          for await (const chunk of zipEntryBytes(h, entry)) out += chunk.length;
        })(),
      ).rejects.toThrow(
        'reestrtz2025.csv inflates to more than the 1000 bytes its directory gives (a ZIP bomb, or damaged)',
      );
      expect(out).toBeLessThanOrEqual(1000);
    } finally {
      await h.close();
    }
  });

  test('an entry that inflates to fewer bytes than its directory says', async () => {
    const file = altered('smaller', (b) => b.writeUInt32LE(CSV.length + 40_000, centralAt(b) + 24));
    await expect(readAll(file)).rejects.toThrow(
      /reestrtz2025\.csv is damaged \(\d+ bytes where its directory gives \d+\)/,
    );
  });

  test('a real entry compressed more than the bound allows is refused before it is inflated', async () => {
    const file = path.join(dir, 'bomb.zip');
    python(
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('bomb.csv', b'0' * (50 * 1024 * 1024))`,
      file,
    );
    const ratio = (50 * 1024 * 1024) / (fs.statSync(file).size - 150);
    expect(ratio).toBeGreaterThan(ZIP_LIMITS.ratio);
    await expect(readAll(file)).rejects.toThrow(/bomb\.csv would inflate \d+ times \(at most 200\): a ZIP bomb/);
  });

  test('encrypted, another method, cut short, too many entries, not a ZIP', async () => {
    const encrypted = altered('encrypted', (b) =>
      b.writeUInt16LE(b.readUInt16LE(centralAt(b) + 8) | 1, centralAt(b) + 8),
    );
    await expect(readAll(encrypted)).rejects.toThrow('reestrtz2025.csv is encrypted');
    const bzip2 = makeZip('bzip2.zip', { 'a.csv': CSV }, { method: 'ZIP_BZIP2' });
    await expect(readAll(bzip2)).rejects.toThrow(
      'a.csv is compressed with method 12; only stored and deflated entries are read',
    );
    const whole = fs.readFileSync(makeZip('cut-src.zip', { 'a.csv': CSV }));
    const cut = path.join(dir, 'cut.zip');
    fs.writeFileSync(cut, whole.subarray(0, whole.length - 30));
    await expect(readAll(cut)).rejects.toThrow(/not a ZIP archive, or it is cut short|cut short/);
    const many = path.join(dir, 'many.zip');
    python(
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for i in range(${ZIP_LIMITS.entries + 1}): z.writestr(f'{i}.csv', '')`,
      many,
    );
    await expect(readAll(many)).rejects.toThrow(
      `it holds ${ZIP_LIMITS.entries + 1} entries (at most ${ZIP_LIMITS.entries} are read)`,
    );
    const text = path.join(dir, 'text.zip');
    fs.writeFileSync(text, CSV);
    await expect(readAll(text)).rejects.toThrow(
      'it is not a ZIP archive, or it is cut short (no end of central directory)',
    );
  });

  test('two directory records pointing at the same bytes (an overlap bomb) are refused', async () => {
    const file = path.join(dir, 'overlap.zip');
    python(
      `import sys, zipfile, struct
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('a.csv', 'x' * 1000)
    z.writestr('b.csv', 'y' * 1000)
b = bytearray(open(sys.argv[1], 'rb').read())
second = b.rfind(b'PK\\x01\\x02')
struct.pack_into('<I', b, second + 42, 0)  # b.csv's local header offset: a.csv's
open(sys.argv[1], 'wb').write(b)`,
      file,
    );
    await expect(readAll(file)).rejects.toThrow('a.csv and b.csv overlap');
  });

  test('every refusal is a ZipError, which an import reports in one line', async () => {
    const file = altered('crc2', (b) => b.writeUInt32LE(0, centralAt(b) + 16));
    await expect(readAll(file)).rejects.toBeInstanceOf(ZipError);
  });
});
