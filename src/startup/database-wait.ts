import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { StartupError } from '../common/startup-error.js';
import { isDatabaseUnavailable } from '../database/connection-failure.js';

const RETRY_DELAY_MS = 500;

/** `host:port` of a PostgreSQL URL, for messages (never the credentials). */
export function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
  } catch {
    return 'the address in DATABASE_URL';
  }
}

/**
 * Waits until the database at `url` accepts a session, for at most `waitSeconds` (a database started at the
 * same time as the service, as in a compose file, may need a moment). A refusal that waiting cannot fix
 * (wrong password, no such database) fails at once; either way the message names the host and port.
 */
export async function waitForDatabase(url: string, waitSeconds: number): Promise<void> {
  const address = databaseAddress(url);
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const remaining = deadline - Date.now();
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.max(1000, Math.min(remaining, 5000)) });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      const reason = error instanceof Error ? error.message || (error as NodeJS.ErrnoException).code : String(error);
      if (!isDatabaseUnavailable(error)) {
        throw new StartupError(`the database at ${address} refused the connection (${reason}): check DATABASE_URL`);
      }
      if (Date.now() + RETRY_DELAY_MS > deadline) {
        throw new StartupError(
          `cannot reach the database at ${address} (${reason}) after waiting ${waitSeconds} s: check DATABASE_URL ` +
            'and that PostgreSQL is running (DATABASE_WAIT_SECONDS sets the wait)',
        );
      }
      await sleep(RETRY_DELAY_MS);
    }
  }
}
