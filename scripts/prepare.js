// npm's `prepare` step: compile the TypeScript when the compiler is installed (a clone after
// `npm install` or `npm ci`). A production install (`npm ci --omit=dev`, as the Docker image's
// dependency stage runs) has no compiler and uses a dist/ compiled elsewhere, so it skips.
'use strict';
const { execFileSync } = require('node:child_process');
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  process.stdout.write('prepare: TypeScript is not installed (production install); not compiling, dist/ is used as it is\n');
  process.exit(0);
}
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
