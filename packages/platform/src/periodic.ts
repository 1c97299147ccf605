import type { Logger } from 'pino';

/** A task run on its interval and whenever asked. */
export interface OnDemandTask {
  /** Runs the task now, or once more after the run under way. */
  kick(): void;
  /** Stops the runs: waits for the one under way and starts no other. */
  stop(): Promise<void>;
}

/**
 * Runs `task` now, then every `everyMs` and at every `kick`, one run at a time: a run that is due
 * while one is under way follows it once, however many intervals or kicks came meanwhile (so a
 * task slower than its interval never builds a backlog). A failed run is logged as a warning with
 * `failed`, and the next one tries again. The timer keeps no process alive.
 */
export function runOnDemand(
  task: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failed: string,
): OnDemandTask {
  let running: Promise<void> | undefined;
  let due = false;
  let stopped = false;
  const run = () => {
    if (stopped) return;
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
  return {
    kick: run,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * `runOnDemand` without kicks: `task` now and then every `everyMs`. Returns the stop, which waits
 * for a run under way and starts no other.
 */
export function runPeriodically(
  task: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failed: string,
): () => Promise<void> {
  return runOnDemand(task, everyMs, logger, failed).stop;
}
