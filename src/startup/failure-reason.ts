import { StartupError } from '../common/startup-error.js';

/** A StartupError says what to do in one line; anything else is a defect and keeps its stack. */
export function failureReason(error: unknown): string {
  if (error instanceof StartupError) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
