// A run of an import file's bytes becomes its lines' outcomes, packed for the trip back from a
// worker thread. Unpacked, they must say what each line of the file says, in its order.

import { BLANK, DELETE, INVALID, overlongLine, packLines, PUT } from '../../src/data/chunk';
import { keyHash } from '../../src/data/keyset';

const bytes = (text: string) => new TextEncoder().encode(text);

/** The packed run read back as one record a line, as the import loop reads it. */
function unpack(text: string) {
  const p = packLines(bytes(text));
  const out: unknown[] = [];
  let field = 0;
  let reason = 0;
  for (const kind of p.kinds) {
    if (kind === BLANK) out.push('blank');
    else if (kind === INVALID) out.push({ invalid: p.reasons[reason++] });
    else {
      const from = field === 0 ? 0 : p.ends[field - 1];
      const parts = [
        p.text.slice(from, p.ends[field]),
        p.text.slice(p.ends[field], p.ends[field + 1]),
        p.text.slice(p.ends[field + 1], p.ends[field + 2]),
        p.text.slice(p.ends[field + 2], p.ends[field + 3]),
      ];
      const hash = [p.hashes[field / 2], p.hashes[field / 2 + 1]];
      out.push({ kind: kind === PUT ? 'put' : kind === DELETE ? 'delete' : kind, parts, hash });
      field += 4;
    }
  }
  expect(field).toBe(p.ends.length);
  expect(p.hashes.length).toBe(field / 2);
  expect(reason).toBe(p.reasons.length);
  return out;
}

test('puts, deletes, blank and invalid lines, in the order of the file, with their keys, bodies and key hashes', () => {
  const text =
    [
      '{"operation":"Check","registration":"ab12 cde","vehicle":{"Description":"ONE"}}',
      '',
      '{"operation":"CheckUSA","registration":"7abc123","state":"California","delete":true}',
      '{"operation":"Nope","registration":"AB12CDE"}\r',
      '  \t ',
      '{"operation":"UKMOT","registration":"M1","mot":{"make":"FORD"}}\r',
      'not json',
    ].join('\n') + '\n';
  const h = (op: string, reg: string, st: string) => [...keyHash(op, reg, st)];
  expect(unpack(text)).toEqual([
    { kind: 'put', parts: ['Check', 'AB12CDE', '', '{"Description":"ONE"}'], hash: h('Check', 'AB12CDE', '') },
    'blank',
    { kind: 'delete', parts: ['CheckUSA', '7ABC123', 'CA', ''], hash: h('CheckUSA', '7ABC123', 'CA') },
    { invalid: 'unknown operation "Nope"' },
    'blank',
    { kind: 'put', parts: ['UKMOT', 'M1', '', '{"make":"FORD"}'], hash: h('UKMOT', 'M1', '') },
    { invalid: expect.stringMatching(/^not valid JSON/) },
  ]);
});

test('a run ending without a line break has its last line; one ending with a blank line has it', () => {
  expect(unpack('{"operation":"Check","registration":"A1","vehicle":{}}')).toHaveLength(1);
  expect(unpack('{"operation":"Check","registration":"A1","vehicle":{}}\n\n')).toEqual([
    expect.objectContaining({ kind: 'put' }),
    'blank',
  ]);
  expect(unpack('')).toEqual([]);
});

test('text in other scripts comes through whole, malformed UTF-8 as U+FFFD', () => {
  const [r] = unpack(
    '{"operation":"CheckChina","registration":"\u4eacA12345","vehicle":{"Description":"caf\u00e9 \u{1F697}"}}\n',
  ) as { parts: string[] }[];
  expect(r.parts.slice(0, 2)).toEqual(['CheckChina', '\u4eacA12345']);
  expect(JSON.parse(r.parts[3])).toEqual({ Description: 'caf\u00e9 \u{1F697}' });
  const bad = Uint8Array.from([
    ...bytes('{"operation":"Check","registration":"A1","vehicle":{"Description":"'),
    0xff,
    ...bytes('"}}\n'),
  ]);
  const p = packLines(bad);
  expect(p.kinds[0]).toBe(PUT);
  expect(p.text).toContain('\ufffd');
});

test('an overlong line is one invalid line with the reason given', () => {
  const p = overlongLine('line is longer than 4194304 bytes');
  expect([...p.kinds]).toEqual([INVALID]);
  expect(p.reasons).toEqual(['line is longer than 4194304 bytes']);
  expect(p.ends.length + p.hashes.length + p.text.length).toBe(0);
});
