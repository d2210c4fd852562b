// Which provider a name in PROVIDERS is, built from the configuration: one line per provider. With
// both `dvla` and `dvsa` listed, the DVLA's UK lookups ask the DVSA too (uk.ts), through the one
// DVSA provider the list holds (one token, one quota).

import type { Config } from '../config';
import type { Logger } from '../ops/logger';
import { DvlaProvider } from './dvla';
import { createDvsaProvider } from './dvsa';
import { createRdwProvider } from './rdw';
import type { Provider } from './provider';
import { RegcheckProvider } from './regcheck';
import { UkVehicleProvider } from './uk';

type Factory = (config: Config, log: ProviderLog | null) => Provider;

/** Where a provider tells the operator of trouble of its own (the DVSA's quota failing over). */
type ProviderLog = Pick<Logger, 'warn'>;

// config.ts refuses a provider listed without its credentials, so the non-null assertions hold.
const FACTORIES: Readonly<Record<string, Factory>> = {
  dvla: (c) => new DvlaProvider({ url: c.upstream.dvla.url, apiKey: c.upstream.dvla.apiKey! }),
  regcheck: (c) => new RegcheckProvider({ url: c.upstream.regcheck.url, username: c.upstream.regcheck.username! }),
  dvsa: (c, log) => createDvsaProvider(c.dvsa!, { redisUrl: c.redisUrl, redisPrefix: c.redisPrefix, log }),
  rdw: (c) => createRdwProvider(c.rdw),
};

/** The providers PROVIDERS lists (the store aside), in its order. */
export function buildProviders(config: Config, log: ProviderLog | null = null): Provider[] {
  const names = config.upstream.providers;
  const built = new Map<string, Provider>();
  const make = (name: string): Provider => {
    const factory = FACTORIES[name];
    if (!factory) throw new Error(`provider ${name} is not built into this release`);
    const p = built.get(name) ?? factory(config, log);
    built.set(name, p);
    return p;
  };
  return names.map((name) =>
    name === 'dvla' && names.includes('dvsa') ? new UkVehicleProvider(make('dvla'), make('dvsa')) : make(name),
  );
}
