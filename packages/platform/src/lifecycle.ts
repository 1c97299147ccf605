import type { Logger } from 'pino';
import { TIMED_OUT, within } from './within';

/** One step of an ordered shutdown. */
interface Step {
  name: string;
  run: () => Promise<unknown> | unknown;
}

/**
 * Ordered graceful shutdown: readiness flips to draining first, then steps run in the
 * order they were registered (stop accepting, drain, NATS, pool, Redis, telemetry),
 * all under one deadline.
 */
export class Lifecycle {
  private readonly steps: Step[] = [];
  private stopping: Promise<void> | undefined;
  private draining = false;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs = 10_000,
  ) {}

  /** True once shutdown began; readiness must then report 503. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Registers a shutdown step; steps run in registration order. */
  onShutdown(name: string, run: Step['run']): void {
    this.steps.push({ name, run });
  }

  /** Runs every step once, in order; later calls return the same promise. */
  shutdown(reason = 'shutdown'): Promise<void> {
    this.stopping ??= this.runSteps(reason);
    return this.stopping;
  }

  /** Calls shutdown on SIGTERM and SIGINT, then exits. */
  installSignalHandlers(): void {
    const handler = (signal: NodeJS.Signals) => {
      this.shutdown(signal).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  }

  private async runSteps(reason: string): Promise<void> {
    this.draining = true;
    this.logger.info({ reason }, 'shutting down');
    // The step under way, so that a deadline names what did not finish.
    let current: string | undefined;
    const all = (async () => {
      for (const step of this.steps) {
        current = step.name;
        try {
          await step.run();
        } catch (err) {
          this.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
    })();
    if ((await within(all, this.timeoutMs)) === TIMED_OUT) {
      this.logger.error({ timeoutMs: this.timeoutMs, step: current }, 'shutdown deadline passed');
      throw new Error(`shutdown deadline passed during step "${current}"`);
    }
    this.logger.info('shutdown complete');
  }
}

/**
 * What a service's start has opened so far, each with how to close it. Closing goes newest first,
 * which is also the shutdown order (servers before the work they feed, stores last): a failed
 * start closes it all at once, a started service hands it to its Lifecycle as named steps.
 */
export class Opened {
  private readonly steps: Step[] = [];

  /** Records how to close `resource`, just opened, and returns it. */
  add<T>(name: string, resource: T, close: (resource: T) => unknown): T {
    this.steps.push({ name, run: () => close(resource) });
    return resource;
  }

  /** Records work just started that `stop` ends (a consumer, a periodic task). */
  addStop(name: string, stop: () => unknown): void {
    this.steps.push({ name, run: stop });
  }

  /** Registers everything recorded as `lifecycle`'s shutdown steps, newest first. */
  handTo(lifecycle: Lifecycle): void {
    for (const { name, run } of this.steps.splice(0).reverse()) lifecycle.onShutdown(name, run);
  }

  /** Closes everything after a failed start, newest first; close failures are logged, as the start's own error is the one to report. */
  async closeAfterFailedStart(logger: Logger): Promise<void> {
    for (const { name, run } of this.steps.splice(0).reverse()) {
      await Promise.resolve()
        .then(run)
        .catch((err: unknown) => logger.warn({ err, step: name }, 'closing after a failed start'));
    }
  }
}
