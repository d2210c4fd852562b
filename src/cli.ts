#!/usr/bin/env node
// `reglookup serve | import FILE | users ... | migrate | cache ...`: the command line, and what `npm start` runs. Each
// group of commands lives in its own module under cli/.

import { Command } from 'commander';
import { registerCache } from './cli/cache';
import { fatal } from './cli/common';
import { registerAudit } from './cli/audit';
import { registerData } from './cli/data';
import { registerLookup } from './cli/lookup';
import { registerMigrate } from './cli/migrate';
import { registerServe } from './cli/serve';
import { registerUsers } from './cli/users';
import { VERSION } from './ops/version';

const program = new Command();
program
  .name('reglookup')
  .description('Vehicle registration lookup service (SOAP 1.1/1.2, HTTP GET/POST)')
  .version(VERSION, '-V, --version', 'print the version and exit');
registerServe(program);
registerData(program);
registerLookup(program);
registerUsers(program);
registerAudit(program);
registerMigrate(program);
registerCache(program);
program.parseAsync(process.argv).catch(fatal);
