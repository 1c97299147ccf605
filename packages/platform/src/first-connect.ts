import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

// The longest wait between first connection attempts: a store back is noticed within 2 s.
const MAX_FIRST_CONNECT_WAIT_MS = 2000;

/** What `untilReachable` says while it waits, and what ends the waiting. */
export interface FirstConnectOptions {
  /** The warning logged at each failed attempt, with the error, `fields`, `attempt` and `retryInMs`. */
  message: string;
  /** Fields naming the store (its servers, without credentials). */
  fields?: Record<string, unknown>;
  /** Ends the waiting: the pending wait rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The first connection to a store that may not be there yet (a pod started while PostgreSQL or
 * NATS is down, restarting, or its name not resolving): calls `connect` until it succeeds, waiting
 * 250 ms more after each failure, at most 2 s, and logging a warning at each. Only the failures
 * `notThereYet` accepts are tried again; any other (a refused login, a missing database, a bad
 * certificate) rejects at once, since waiting would not heal it. There is no deadline of its own:
 * a pod waits as long as its startup probe lets it, and a process without one until the store
 * answers or `signal` ends the waiting (SIGTERM, which kills a process whose start has not
 * finished, ends it too).
 */
export async function untilReachable<T>(
  connect: () => Promise<T>,
  notThereYet: (err: unknown) => boolean,
  logger: Logger | undefined,
  { message, fields = {}, signal }: FirstConnectOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await connect();
    } catch (err) {
      if (!notThereYet(err)) throw err;
      const retryInMs = Math.min(attempt * 250, MAX_FIRST_CONNECT_WAIT_MS);
      logger?.warn({ err, ...fields, attempt, retryInMs }, message);
      await sleep(retryInMs, undefined, { signal });
    }
  }
}

/** The `code`s of an error and, for an AggregateError (each address of a name refused), of the errors it holds. */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') codes.push(code);
  const inner = (err as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(inner)) for (const e of inner) codes.push(...errorCodes(e));
  return codes;
}
