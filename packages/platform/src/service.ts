import { COMMON_CONFIG, ConfigError } from './config';
import { createLogger } from './logger';
import { within } from './within';

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

/** What the telemetry preload leaves for the exit: something that sends the spans still held. */
export interface TelemetryHandle {
  shutdown(): Promise<void>;
}

// On globalThis, since the preload (instrumentation.ts) and the service may load this module apart.
const TELEMETRY_HANDLE = Symbol.for('outreach.telemetry');
// How long an exit waits for the last spans: a collector that does not answer must not hold it
// past the chart's terminationGraceMarginSeconds (5 s) after the shutdown deadline.
const TELEMETRY_FLUSH_MS = 3000;

/** Registers the running telemetry, whose spans `runMain` sends before the process exits. */
export function registerTelemetry(handle: TelemetryHandle): void {
  (globalThis as Record<symbol, unknown>)[TELEMETRY_HANDLE] = handle;
}

/** Sends the spans the telemetry still holds (if any runs), waiting at most TELEMETRY_FLUSH_MS. */
async function flushTelemetry(): Promise<void> {
  const handle = (globalThis as Record<symbol, TelemetryHandle | undefined>)[TELEMETRY_HANDLE];
  if (handle)
    await within(
      handle.shutdown().catch(() => undefined),
      TELEMETRY_FLUSH_MS,
    );
}

/**
 * A logger for the line that says why a start failed: the service's own logger is gone with its
 * start, so this makes one alike (JSON, the service's name, LOG_LEVEL when that is valid). Undefined
 * when none can be made; the line then goes to the console.
 */
function fatalLogger(name: string) {
  const level = process.env.LOG_LEVEL;
  const levels: readonly string[] = COMMON_CONFIG.LOG_LEVEL.values;
  try {
    return createLogger(name, level && levels.includes(level) && level !== 'silent' ? level : 'info');
  } catch {
    return undefined;
  }
}

/**
 * The whole of a service's `main`: starts it from the environment, stops it in order on
 * SIGTERM or SIGINT, and exits 1 when it cannot start, saying why in a JSON log line at `fatal`
 * (a bad configuration names every bad variable in `problems`). A SIGTERM while the start waits
 * for a store ends the process at once (Node's default, as no handler is set before the start). Either way the spans of its last requests are sent
 * before it exits (an exit skips `beforeExit`, so nothing else would send them).
 */
export function runMain(name: string, start: (env: NodeJS.ProcessEnv) => Promise<RunningService>): void {
  const exit = (code: number) => flushTelemetry().then(() => process.exit(code));
  start(process.env).then(
    (service) => {
      const stop = () =>
        service.stop().then(
          () => exit(0),
          () => exit(1),
        );
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      const logger = fatalLogger(name);
      if (!logger) console.error(`${name} failed to start:`, err instanceof Error ? err.message : err);
      else if (err instanceof ConfigError)
        logger.fatal({ problems: err.problems }, `${name} failed to start: ${err.message}`);
      else logger.fatal({ err }, `${name} failed to start: ${err instanceof Error ? err.message : err}`);
      void exit(1);
    },
  );
}
