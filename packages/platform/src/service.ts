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
