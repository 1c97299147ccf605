import pino from 'pino';
import { Lifecycle, Opened } from './lifecycle';

/** A logger that keeps each line's message and step. */
function recordingLogger() {
  const lines: Array<{ msg: string; step?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Records three resources whose closes append their names to `closed`; the middle one fails. */
function openThree(closed: string[]): Opened {
  const opened = new Opened();
  opened.add('postgres', 'pool', () => void closed.push('postgres'));
  opened.add('nats', 'conn', async () => {
    closed.push('nats');
    throw new Error('drain failed');
  });
  opened.add('http', 'server', () => void closed.push('http'));
  return opened;
}

describe('Opened', () => {
  it('closes newest first after a failed start, logging a failed close and going on', async () => {
    const closed: string[] = [];
    const { logger, lines } = recordingLogger();
    const opened = openThree(closed);
    await opened.closeAfterFailedStart(logger);
    expect(closed).toEqual(['http', 'nats', 'postgres']);
    expect(lines.filter((l) => l.msg === 'closing after a failed start').map((l) => l.step)).toEqual([
      'nats',
    ]);
    // Closed once: a second call has nothing left to close.
    await opened.closeAfterFailedStart(logger);
    expect(closed).toHaveLength(3);
  });

  it('hands its closes to a Lifecycle as named steps, newest first', async () => {
    const closed: string[] = [];
    const { logger, lines } = recordingLogger();
    const lifecycle = new Lifecycle(logger, 1000);
    openThree(closed).handTo(lifecycle);
    await lifecycle.shutdown('test');
    expect(closed).toEqual(['http', 'nats', 'postgres']);
    expect(lines.filter((l) => l.msg === 'shutdown step failed').map((l) => l.step)).toEqual(['nats']);
  });
});

describe('Lifecycle', () => {
  it('names the step that was under way when the shutdown deadline passed', async () => {
    const { logger, lines } = recordingLogger();
    const lifecycle = new Lifecycle(logger, 50);
    lifecycle.onShutdown('http', () => undefined);
    lifecycle.onShutdown('state', () => new Promise(() => {}));
    await expect(lifecycle.shutdown('test')).rejects.toThrow('shutdown deadline passed during step "state"');
    expect(lines.find((l) => l.msg === 'shutdown deadline passed')?.step).toBe('state');
  });
});
