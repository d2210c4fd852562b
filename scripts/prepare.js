// npm's `prepare` step: compile the TypeScript when the compiler is installed (a clone after
// `npm install` or `npm ci`). A production install (`npm ci --omit=dev`, as the Docker image's
// dependency stage runs) has no compiler and uses a dist/ compiled elsewhere, so it skips, saying
// that dist/ must come from a build when there is none.
'use strict';
const { execFileSync } = require('node:child_process');
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // Exit 0 all the same: the image's dependency stage installs exactly this way, with dist/ copied in later.
  const built = require('node:fs').existsSync(require('node:path').join(process.cwd(), 'dist', 'cli.js'));
  process.stdout.write(
    built
      ? 'prepare: TypeScript is not installed (production install); not compiling, the dist/ already here is used as it is\n'
      : 'prepare: TypeScript is not installed (production install) and there is no dist/: dist/ must come from a build, ' +
          'so "npm start" will refuse to run; build first: npm ci && npm run build && npm prune --omit=dev (docs/operating.md, "Production install without Docker")\n',
  );
  process.exit(0);
}
// A fresh dist/: files of modules since removed would otherwise stay, and ship in `npm pack`.
require('node:fs').rmSync(require('node:path').join(__dirname, '..', 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
