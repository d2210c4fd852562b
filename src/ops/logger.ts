// The process's logger (winston): JSON lines by default, one line per request from the app.

import winston from 'winston';

export type Logger = winston.Logger;

export function createLogger(level: string, format: 'json' | 'text'): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format:
      format === 'json'
        ? winston.format.combine(winston.format.timestamp(), winston.format.json())
        : winston.format.combine(winston.format.timestamp(), winston.format.simple()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn'] })],
  });
}
