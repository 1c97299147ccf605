import { ConfigError } from './config';

/**
 * What every service's `start(env, options)` returns: the ports it listens on (0 in the
 * env picks free ones, which tests use) and an ordered, idempotent stop.
 */
export interface RunningService {
  name: string;
  ports: Record<string, number>;
  stop(): Promise<void>;
}

/** A clock; services take one so that tests can move time. */
export type Clock = () => Date;

/** The real clock. */
export const systemClock: Clock = () => new Date();

/**
 * The whole of a service's `main`: starts it from the environment, stops it in order on
 * SIGTERM or SIGINT, and exits 1 with a readable message when it cannot start (a bad
 * configuration names every bad variable).
 */
export function runMain(name: string, start: (env: NodeJS.ProcessEnv) => Promise<RunningService>): void {
  start(process.env).then(
    (service) => {
      const stop = () =>
        service.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      if (err instanceof ConfigError) console.error(err.message);
      else console.error(`${name} failed to start:`, err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
