import { Logger } from '@nestjs/common';

/**
 * Runs `work` every `intervalSeconds` (first run one interval after start) without overlapping itself.
 * The timer does not keep the process alive; the returned function stops it.
 */
export function schedulePeriodicJob(name: string, intervalSeconds: number, work: () => Promise<void>): () => void {
  const logger = new Logger(name);
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work()
      .catch((error: unknown) => logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error)))
      .finally(() => {
        running = false;
      });
  }, intervalSeconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
