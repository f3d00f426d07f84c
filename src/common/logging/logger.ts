import pino from 'pino';
import PinoPretty from 'pino-pretty';
import type { AppConfig } from '../../config/app-config.js';

export type RootLogger = pino.Logger;

/** Injection token of the application's one pino logger (request lines, Nest's own messages, jobs, errors). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one logger of a process: JSON lines on stdout (`time` ISO 8601, `level` by name), or coloured lines
 * for a terminal with LOG_FORMAT=pretty. `destination` replaces stdout (tests capture the output with it).
 */
export function createLogger(config: Pick<AppConfig, 'logLevel' | 'logFormat'>, destination?: pino.DestinationStream): RootLogger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (destination) return pino(options, destination);
  if (config.logFormat === 'pretty') {
    return pino(options, PinoPretty({ translateTime: 'SYS:standard', ignore: 'pid,hostname', sync: true }));
  }
  // Asynchronous writes (sonic-boom): a request never waits for stdout; pino flushes what is left at exit.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}
