// A Logger that keeps what it is told, for tests that check what was logged.

import type { Logger } from '../../src/ops/logger';

export interface LoggedLine {
  readonly level: string;
  readonly message: string;
  readonly meta?: unknown;
}

export function fakeLogger(): { logger: Logger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const at = (level: string) => (message: string, meta?: unknown) => {
    lines.push({ level, message, meta });
  };
  const logger = { warn: at('warn'), info: at('info'), error: at('error'), debug: at('debug') } as unknown as Logger;
  return { logger, lines };
}
