#!/usr/bin/env node
// What `npm start` and the `reglookup` command run: the compiled command line (dist/cli.js), loaded
// in this same process so that signals (SIGTERM from npm, systemd, a shell) reach the server
// directly. Plain JavaScript, because dist/ may not exist yet: a clone is uncompiled until built,
// and a production install (`npm ci --omit=dev`) has no compiler. Then one line says so, no stack.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'dist', 'cli.js');

function fail(message) {
  process.stderr.write(`reglookup: ${message}\n`);
  process.exit(2);
}

if (!fs.existsSync(cli)) {
  fail(
    `dist/ is missing: this is an uncompiled checkout (${root}); run "npm run build" (needs the dev dependencies: npm ci), ` +
      'then "npm prune --omit=dev" for a production install (docs/operating.md, "Production install without Docker")',
  );
}
try {
  require(cli);
} catch (e) {
  // A dependency that is not installed (no `npm ci` yet): name it, no stack. Anything else is a bug: rethrow.
  if (e && e.code === 'MODULE_NOT_FOUND' && !String(e.message).includes(cli)) {
    const what = /Cannot find module '([^']+)'/.exec(String(e.message));
    fail(
      `cannot load ${what ? what[1] : 'a dependency'}: the dependencies are not installed; run "npm ci" (or "npm ci --omit=dev" beside a built dist/)`,
    );
  }
  throw e;
}
