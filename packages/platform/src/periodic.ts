import type { Logger } from 'pino';

/**
 * Runs `task` now and then every `everyMs`, one run at a time (a slow run delays the next
 * instead of overlapping it). A failed run is logged as a warning with `failed`, and the next
 * one tries again. The timer keeps no process alive. Returns the stop, which waits for a run
 * under way.
 */
export function runPeriodically(
  task: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failed: string,
): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running.then(async () => {
      try {
        await task();
      } catch (err) {
        logger.warn({ err }, failed);
      }
    });
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
