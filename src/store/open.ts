// DATABASE_URL -> a VehicleStore.

import { ConfigError } from '../config';
import { SqliteStore } from './sqlite';
import type { VehicleStore } from './store';

export function openStore(databaseUrl: string): VehicleStore {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new ConfigError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:data/reglookup.db');
    return new SqliteStore(file);
  }
  throw new ConfigError(`DATABASE_URL '${databaseUrl.replace(/\/\/[^@/]*@/, '//***@')}' is not supported; use sqlite:PATH`);
}
