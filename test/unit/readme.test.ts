// Keeps the README true: every operation has a demo plate that the sample data answers, every error
// code is in the table with its status, and every environment variable the config reads is listed.

import fs from 'node:fs';
import path from 'node:path';
import { OPERATIONS } from '../../src/contract/operations';
import { ERRORS } from '../../src/service/errors';
import { normalizeRegistration } from '../../src/service/normalize';
import { SAMPLE } from '../helpers/sample';

const root = path.resolve(__dirname, '../..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

test('every operation has a demo plate in the README that is in the sample data', () => {
  for (const op of OPERATIONS) {
    const row = new RegExp(`^\\| \`${op.name}\` \\| \`([^\`]+)\``, 'm').exec(readme);
    expect(row).not.toBeNull();
    const key = normalizeRegistration(row![1]);
    expect(key.ok).toBe(true);
    const found = SAMPLE.some((r) => r.operation === op.name && key.ok && normalizeRegistration(r.registration).ok && (normalizeRegistration(r.registration) as { value: string }).value === key.value);
    expect(found).toBe(true);
  }
});

test('every error code is in the README table with its HTTP status', () => {
  for (const [code, spec] of Object.entries(ERRORS)) {
    expect(readme).toMatch(new RegExp(`^\\| \`${code}\` \\| ${spec.status} \\|`, 'm'));
  }
});

test('every environment variable read by the config is documented', () => {
  const src = fs.readFileSync(path.join(root, 'src/config.ts'), 'utf8');
  const vars = new Set([...src.matchAll(/env, '([A-Z_]+)'/g), ...src.matchAll(/env\.([A-Z_]+)/g)].map((m) => m[1]));
  expect(vars.size).toBeGreaterThan(10);
  for (const v of vars) expect(readme).toMatch(new RegExp(`^\\| \`${v}\` \\|`, 'm'));
});
