// The heap flags the serving process sets (src/ops/memory.ts) must be ones this Node's V8 knows:
// an unknown flag is only reported on stderr at start-up and the tuning silently lost.

import { spawnSync } from 'node:child_process';
import { HEAP_FLAGS } from '../../src/ops/memory';

test.each(HEAP_FLAGS)('this Node accepts %s', (flag) => {
  const run = spawnSync(process.execPath, [flag, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toBe('ok');
});

test('a flag V8 does not know is noticed by the same check', () => {
  const run = spawnSync(process.execPath, ['--heap-growing-percentage-that-does-not-exist=1', '-e', '0'], {
    encoding: 'utf8',
  });
  expect(run.status !== 0 || run.stderr !== '').toBe(true);
});
