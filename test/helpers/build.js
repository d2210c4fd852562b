// Jest's globalSetup for the projects that run `reglookup` as a process (cli, pg, redis, faults): the
// sources compiled once per run into dist-test/ (tsc, incremental), which test/helpers/cli.ts starts. A
// process then starts as fast as the installed command does, rather than compiling the sources again
// through ts-node each time; dist/ is left to the build and to `npm pack` (which wipes and rewrites it).
// dist-test/ sits beside src/ as dist/ does, so that the paths the code finds from its own folder
// (wsdl/, data/, console/, package.json) are the same.
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');

module.exports = function build() {
  const root = path.resolve(__dirname, '../..');
  const out = path.join(root, 'dist-test');
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      path.join(root, 'tsconfig.json'),
      '--outDir',
      out,
      '--incremental',
      // Inside the output: removing dist-test/ removes what says it is up to date.
      '--tsBuildInfoFile',
      path.join(out, '.tsbuildinfo'),
    ],
    { stdio: 'inherit' },
  );
};
