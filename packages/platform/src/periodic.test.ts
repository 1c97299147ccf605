import pino from 'pino';
import { deferred } from '../../../test/support/deferred';
import { runOnDemand, runPeriodically } from './periodic';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runPeriodically', () => {
  it('runs now and then on its interval, never two runs at once, and goes on after a failure', async () => {
    let runs = 0;
    let inRun = 0;
    let mostAtOnce = 0;
    const warnings: string[] = [];
    const warnLogger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push(JSON.parse(line).msg) },
    );
    const stop = runPeriodically(
      async () => {
        runs++;
        inRun++;
        mostAtOnce = Math.max(mostAtOnce, inRun);
        // Slower than the interval: the next run waits for this one.
        await sleep(30);
        inRun--;
        if (runs === 2) throw new Error('boom');
      },
      10,
      warnLogger,
      'task failed',
    );
    // Until the fourth run began (about 100 ms here; a loaded machine's timers may take longer).
    for (let waited = 0; runs < 4 && waited < 5000; waited += 20) await sleep(20);
    await stop();
    const atStop = runs;
    expect(runs).toBeGreaterThanOrEqual(4);
    expect(mostAtOnce).toBe(1);
    expect(warnings).toEqual(['task failed']);
    await sleep(50);
    expect(runs).toBe(atStop);
  });

  it('follows a run slower than many intervals with one run, not one per interval missed', async () => {
    let runs = 0;
    const { promise: released, resolve: release } = deferred();
    const { promise: second, resolve: secondBegan } = deferred();
    const stop = runPeriodically(
      async () => {
        runs++;
        if (runs === 2) secondBegan();
        await released;
      },
      10,
      logger,
      'task failed',
    );
    await sleep(200); // about 20 intervals, all while the first run is under way
    release();
    await second;
    // Stopped before any timer could fire again: only the first run and the one due after it.
    await stop();
    expect(runs).toBe(2);
  });

  it('stop waits for the run under way', async () => {
    let finished = false;
    const stop = runPeriodically(
      async () => {
        await sleep(50);
        finished = true;
      },
      60_000,
      logger,
      'task failed',
    );
    await stop();
    expect(finished).toBe(true);
  });
});

describe('runOnDemand', () => {
  it('runs at a kick without waiting for its interval, once after the run under way for any number of kicks, and not after stop', async () => {
    let runs = 0;
    let gate = deferred();
    const task = runOnDemand(
      async () => {
        runs++;
        await gate.promise;
      },
      60_000,
      logger,
      'task failed',
    );
    expect(runs).toBe(1);
    // Three kicks while the first run is under way: one run follows it.
    task.kick();
    task.kick();
    task.kick();
    const held = gate;
    gate = deferred();
    held.resolve();
    for (let waited = 0; runs < 2 && waited < 5000; waited += 10) await sleep(10);
    gate.resolve();
    await sleep(50);
    expect(runs).toBe(2);
    // Idle: a kick runs it at once, an hour before its interval.
    task.kick();
    expect(runs).toBe(3);
    await task.stop();
    task.kick();
    expect(runs).toBe(3);
  });
});
