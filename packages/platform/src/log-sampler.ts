import type { Logger } from 'pino';
import type { AppError } from './errors';

/** How often, at most, one kind of outage failure gets a log line: once per 10 s. */
export const OUTAGE_LOG_INTERVAL_MS = 10_000;

/** Kinds remembered at most; past this, kinds whose interval has ended are forgotten. */
const MAX_KINDS = 1000;

/**
 * Lets through at most one line per kind (a route or gRPC method, and an error code) per
 * interval, and counts the ones it leaves out, so that the next line of that kind can say how
 * many there were. For failures that are an outage's expected face, which every request meets
 * while a store or backend is down: one line each would flood the logs with the same news, which
 * `dependency_up` and /readyz already tell.
 */
export class LogSampler {
  private readonly kinds = new Map<string, { since: number; omitted: number }>();

  constructor(
    private readonly intervalMs = OUTAGE_LOG_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Whether a line of `kind` is written now: the number of lines of that kind left out since the
   * last one written (0 for the first), or undefined when this one is left out.
   */
  take(kind: string): number | undefined {
    const now = this.now();
    const entry = this.kinds.get(kind);
    if (entry !== undefined && now - entry.since < this.intervalMs) {
      entry.omitted++;
      return undefined;
    }
    const omitted = entry?.omitted ?? 0;
    if (entry === undefined && this.kinds.size >= MAX_KINDS) this.forgetEnded(now);
    this.kinds.set(kind, { since: now, omitted: 0 });
    return omitted;
  }

  private forgetEnded(now: number): void {
    for (const [kind, entry] of this.kinds) if (now - entry.since >= this.intervalMs) this.kinds.delete(kind);
  }
}

/**
 * True for a failure that is the expected face of an outage rather than a bug: a store or backend
 * that did not answer (`unavailable`, from a refused connection, a lost one, a gRPC UNAVAILABLE or
 * DEADLINE_EXCEEDED). Such failures are logged sampled and without stacks (`logOutage`).
 */
export function isOutage(err: AppError): boolean {
  return err.code === 'unavailable';
}

/** The cause of an error as a log field without its stack: its type, code and message. */
export function causeOf(err: AppError): Record<string, unknown> {
  const cause = (err.cause ?? err) as { name?: unknown; code?: unknown; message?: unknown };
  const out: Record<string, unknown> = {};
  if (typeof cause?.name === 'string') out.type = cause.name;
  if (cause?.code !== undefined) out.code = cause.code;
  if (typeof cause?.message === 'string') out.message = cause.message;
  return out;
}

/**
 * Logs an outage failure (see `isOutage`) through `sampler`: at most one line per interval for
 * each kind and cause (its code, else its type: a refused connection, a full Redis and a refused
 * internal token on one route each get their lines), without stacks, naming the cause and how
 * many like it were left out since the last line (`omitted`). Returns whether a line was written.
 */
export function logOutage(
  log: Logger,
  sampler: LogSampler,
  kind: string,
  fields: Record<string, unknown>,
  err: AppError,
  msg: string,
): boolean {
  const cause = causeOf(err);
  const omitted = sampler.take(`${kind} ${String(cause.code ?? cause.type ?? '')}`);
  if (omitted === undefined) return false;
  log.error({ ...fields, code: err.code, cause, omitted }, msg);
  return true;
}
