import type { Logger } from 'pino';

/**
 * Runs `task` now and then every `everyMs`, one run at a time: a run that is due while one is
 * under way follows it once, however many intervals the slow run took (so a task slower than its
 * interval never builds a backlog). A failed run is logged as a warning with `failed`, and the
 * next one tries again. The timer keeps no process alive. Returns the stop, which waits for a run
 * under way and starts no other.
 */
export function runPeriodically(
  task: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failed: string,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  let due = false;
  let stopped = false;
  const run = () => {
    if (running) {
      due = true;
      return;
    }
    running = (async () => {
      do {
        due = false;
        try {
          await task();
        } catch (err) {
          logger.warn({ err }, failed);
        }
      } while (due && !stopped);
      running = undefined;
    })();
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
