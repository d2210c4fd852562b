// Keeps the README true: every operation has a demo plate that the sample data answers, every error
// code is in the table with its status, and every environment variable the config reads is listed.

import fs from 'node:fs';
import path from 'node:path';
import { OPERATIONS } from '../../src/contract/operations';
import { ERRORS } from '../../src/service/errors';
import { normalizeRegistration } from '../../src/service/normalize';
import { loadConfig } from '../../src/config';
import { documentedErrors, README, readmeTables, unquote } from '../helpers/readme';
import { SAMPLE } from '../helpers/sample';

const root = path.resolve(__dirname, '../..');
// The README and docs/ as one text (test/helpers/readme.ts): the tables now live on the pages of docs/.
const readme = README;

test('every operation has a demo plate in the README that is in the sample data', () => {
  for (const op of OPERATIONS) {
    const row = new RegExp(`^\\| \`${op.name}\` \\| \`([^\`]+)\``, 'm').exec(readme);
    expect(row).not.toBeNull();
    const key = normalizeRegistration(row![1]);
    expect(key.ok).toBe(true);
    const found = SAMPLE.some(
      (r) =>
        r.operation === op.name &&
        key.ok &&
        normalizeRegistration(r.registration).ok &&
        (normalizeRegistration(r.registration) as { value: string }).value === key.value,
    );
    expect(found).toBe(true);
  }
});

test('the README error table and the codes the service knows are the same set, each row with its status and both SOAP codes', () => {
  // Which codes exist is the code's business; what each looks like on the wire is checked against
  // the README row by test/integration/errors.test.ts and test/security/.
  const documented = documentedErrors();
  expect([...documented.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
  for (const e of documented.values()) {
    expect(e.status).toBeGreaterThanOrEqual(400);
    expect(e.status).toBeLessThan(600);
    expect(['soap:Client', 'soap:Server', 'soap:VersionMismatch', 'soap:MustUnderstand']).toContain(e.faultcode11);
    expect(['soap:Sender', 'soap:Receiver', 'soap:VersionMismatch', 'soap:MustUnderstand']).toContain(e.code12);
  }
});

test('every environment variable read by the config is documented', () => {
  const src = fs.readFileSync(path.join(root, 'src/config.ts'), 'utf8');
  const vars = new Set([...src.matchAll(/env, '([A-Z_]+)'/g), ...src.matchAll(/env\.([A-Z_]+)/g)].map((m) => m[1]));
  expect(vars.size).toBeGreaterThan(10);
  // A variable still read only to refuse it is documented as no longer read.
  for (const v of vars) expect(readme).toMatch(new RegExp(`^\\| \`${v}\` \\||^\`${v}\` is no longer read`, 'm'));
});

test('every variable in the configuration tables is one the configuration reads (a row for a variable that does nothing fails)', () => {
  // What loadConfig asks the environment for, recorded as it asks (an empty environment is valid).
  const asked = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get(_t, name) {
        if (typeof name === 'string') asked.add(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  const src = fs.readFileSync(path.join(root, 'src/config.ts'), 'utf8');
  // Variables read only under a condition (set when another is) are found by name in the source.
  for (const m of src.matchAll(/env, '([A-Z_]+)'/g)) asked.add(m[1]);
  const tables = readmeTables('Variable', 'Default');
  expect(tables.length).toBeGreaterThanOrEqual(2);
  const rows = tables.flatMap((t) => t.rows.map((r) => unquote(r.Variable)));
  expect(rows.length).toBeGreaterThan(20);
  expect(rows.filter((v) => !asked.has(v))).toEqual([]);
});
