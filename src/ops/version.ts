// The release's version, from package.json (one place: `reglookup --version`, /healthz, the
// metrics' build info). Read from the package root both when run from src/ (ts-node) and dist/.

import fs from 'node:fs';
import path from 'node:path';

function read(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION = read();
