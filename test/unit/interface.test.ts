// The README's own description of the interface ("The interface") agrees with wsdl/reg.wsdl: the
// same operations with the same parameters, the same vehicleData order, the same result types.
// And nothing in the repository reaches outside it.

import fs from 'node:fs';
import path from 'node:path';
import { parseStringPromise } from 'xml2js';
import { WSDL_FILE, wsdlSequence } from '../helpers/contract';
import { DOC_PAGES, quoted, README, readmeSection, readmeTable, ROOT, tablesOf } from '../helpers/readme';

const section = readmeSection('The interface');

type Node = Record<string, unknown> & { $?: Record<string, string> };

/** Each operation of the WSDL's portType with its request element's parameters, in order. */
async function wsdlOperations(): Promise<Map<string, string[]>> {
  const doc = (await parseStringPromise(fs.readFileSync(WSDL_FILE, 'utf8'))) as Node;
  const defs = doc['wsdl:definitions'] as Node;
  const port = (defs['wsdl:portType'] as Node[]).find((p) => p.$?.name === 'RegSoap')!;
  const names = (port['wsdl:operation'] as Node[]).map((o) => o.$!.name);
  const out = new Map<string, string[]>();
  for (const name of names)
    out.set(
      name,
      (await wsdlSequence(name)).map((f) => f.name),
    );
  return out;
}

test("the README lists every operation of the WSDL, each once, with the WSDL's parameters", async () => {
  const wsdl = await wsdlOperations();
  const list = section.slice(section.indexOf('**Operations'), section.indexOf('**Results'));
  const documented = new Map<string, string[]>();
  for (const item of list.split(/\n- /).slice(1)) {
    // An item is "`Op`, `Op`: `Param`, `Param`", possibly several such clauses separated by ';'.
    for (const clause of item.split('\n\n')[0].replace(/\s+/g, ' ').split(';')) {
      const [ops, params] = clause.split(/:(?= `)/);
      if (params === undefined) continue;
      for (const op of quoted(ops)) {
        expect(documented.has(op)).toBe(false);
        documented.set(op, quoted(params));
      }
    }
  }
  expect([...documented.keys()].sort()).toEqual([...wsdl.keys()].sort());
  for (const [op, params] of wsdl) expect([op, [...documented.get(op)!].sort()]).toEqual([op, [...params].sort()]);
});

test("the README gives vehicleData's children in the WSDL's order, and each result type the WSDL declares", async () => {
  const results = section.slice(section.indexOf('**Results'), section.indexOf('**Transports'));
  const order = /whose children come in this order: ([^.]+)\./.exec(results.replace(/\s+/g, ' '))![1];
  expect(quoted(order)).toEqual((await wsdlSequence('vehicleData')).map((f) => f.name));
  const mot = /`UKMOTData`: (.*?)\. *$/s.exec(results.replace(/\s+/g, ' '))![1];
  const motFields = (await wsdlSequence('UKMOTData')).map((f) => f.name);
  expect(quoted(mot).filter((f) => motFields.includes(f))).toEqual(motFields);
  expect(quoted(mot)).toEqual(expect.arrayContaining((await wsdlSequence('UKTest')).map((f) => f.name)));
});

test('the README and docs/ point to nothing outside the repository', () => {
  expect(README).not.toMatch(/\.\.\/shared|\/work\//);
  // Every relative link of every page resolves to a file or folder of this repository.
  for (const page of DOC_PAGES) {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
    for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(m[1])) continue;
      const target = path.resolve(ROOT, path.dirname(page), m[1]);
      expect(path.relative(ROOT, target).startsWith('..')).toBe(false);
      if (!fs.existsSync(target)) throw new Error(`${page} links to ${m[1]}, which is not in the repository`);
    }
  }
});

test('no test, source or script reads a path outside the repository', () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (['node_modules', 'dist', '.git', '.build', '.work', '.tmp', 'reports', '.stryker-tmp'].includes(e.name))
        continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|js|json|md|sh|yml|py|pl|php|cs|cpp|java)$|^Dockerfile$|^run$/.test(e.name)) files.push(p);
    }
  };
  for (const d of ['src', 'test', 'bench', 'wsdl', '.ci'])
    if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  const offenders: string[] = [];
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    if (/\.\.\/shared\b|['"`]\/work\/|\/home\/\w+\//.test(text)) offenders.push(path.relative(ROOT, f));
    // A relative path climbing out of the repository from where the file sits.
    for (const m of text.matchAll(/['"`]((?:\.\.\/)+)[\w.-]/g)) {
      const up = m[1].length / 3;
      const depth = path.relative(ROOT, path.dirname(f)).split(path.sep).filter(Boolean).length;
      if (up > depth) offenders.push(`${path.relative(ROOT, f)}: ${m[0]}`);
    }
  }
  expect(offenders).toEqual([]);
});

test("the README's Works-with table is the one the interop tests produced (test/interop/WORKS_WITH.md)", () => {
  // Each interop run checks WORKS_WITH.md against what it exercised (works-with.ts); this closes the
  // chain to what a reader of the README sees: same rows, same cells.
  const produced = tablesOf(fs.readFileSync(path.join(ROOT, 'test/interop/WORKS_WITH.md'), 'utf8')).find((t) =>
    t.headers.includes('Transports'),
  )!;
  const shown = readmeTable('Stack', 'Toolkit', 'Version', 'Transports');
  expect(shown.headers).toEqual(produced.headers);
  expect(shown.rows).toEqual(produced.rows);
  expect(shown.rows.length).toBeGreaterThan(0);
});
