import { isDatabaseUnavailable } from '../database/connection-failure.js';
import type { FileStorage } from './storage/file-storage.js';

/**
 * Removes a blob whose recording failed, unless the failure leaves the outcome unknown: a connection that
 * broke during the statement or its commit may have committed the row, and a row whose blob is gone is a file
 * that can never be read. Such a blob stays on disk unreferenced at worst (README "Known limits").
 */
export async function discardUnrecorded(storage: FileStorage, key: string, failure: unknown): Promise<void> {
  if (!isDatabaseUnavailable(failure)) await storage.delete(key);
}
