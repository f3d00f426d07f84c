import type { LoggerService } from '@nestjs/common';
import type pino from 'pino';
import type { RootLogger } from './logger.js';

/**
 * Nest's `Logger` (start-up messages, jobs, errors outside a request) written through the one pino logger,
 * so every line of the process has the same shape. Nest passes the logger's context (its class or job name)
 * as the last argument, and for `error` a stack before it.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: RootLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    if (rest.length > 0 && typeof rest.at(-1) === 'string') fields.context = rest.pop();
    const stack = rest.find((item) => typeof item === 'string');
    if (stack !== undefined) fields.stack = stack;
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...message });
    } else {
      this.logger[level](fields, String(message));
    }
  }
}
