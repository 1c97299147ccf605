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
    const all = (async () => {
      for (const step of this.steps) {
        try {
          await step.run();
        } catch (err) {
          this.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
    })();
    if ((await within(all, this.timeoutMs)) === TIMED_OUT) {
      this.logger.error({ timeoutMs: this.timeoutMs }, 'shutdown deadline passed');
      throw new Error('shutdown deadline passed');
    }
    this.logger.info('shutdown complete');
  }
}
