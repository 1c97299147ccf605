import { stat } from 'node:fs';
import { deferred } from '../../../test/support/deferred';
import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  it('writes concurrent items in one batch and resolves every caller', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number>(async (items) => {
      batches.push(items);
    }, 5);
    await Promise.all([1, 2, 3, 4].map((n) => gc.add(n)));
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  it('with no delay, writes what was added in one turn together, before any timer', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number>(async (items) => {
      batches.push(items);
    }, 0);
    // From an I/O callback, as a request arrives: the loop's check phase comes before its timers,
    // so a write waiting for no timer has started when a 0 ms timer armed first fires.
    const writtenByTimer = await new Promise<number[][]>((resolve) =>
      stat(__filename, () => {
        setTimeout(() => resolve(batches.map((b) => [...b])), 0);
        void Promise.all([1, 2, 3].map((n) => gc.add(n)));
      }),
    );
    expect(writtenByTimer).toEqual([[1, 2, 3]]);
  });

  it('writes one batch at a time: what arrives during a write goes together in the next', async () => {
    const batches: number[][] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    // The first write lasts until released, not a fixed time a loaded machine may overrun
    // (its timer once fired before the test's own 5 ms one, and 5 went in a batch of its own).
    const { promise: firstStarted, resolve: started } = deferred();
    const { promise: firstReleased, resolve: release } = deferred();
    const gc = new GroupCommit<number>(async (items) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      batches.push(items);
      if (batches.length === 1) {
        started();
        await firstReleased;
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
    }, 1);
    const first = gc.add(1);
    await firstStarted; // the first write is in progress
    const rest = [2, 3, 4].map((n) => gc.add(n));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const late = gc.add(5);
    release();
    await Promise.all([first, ...rest, late]);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
    expect(maxInFlight).toBe(1);
  });

  it('fails only the callers of a failed batch and flushes at maxBatch', async () => {
    let calls = 0;
    const gc = new GroupCommit<number>(
      async () => {
        calls++;
        if (calls === 1) throw new Error('disk full');
      },
      1000,
      { maxBatch: 2 },
    );
    const first = Promise.allSettled([gc.add(1), gc.add(2)]);
    const third = gc.add(3);
    expect((await first).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await gc.close(); // writes the waiting item without waiting for the timer
    await expect(third).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });

  it('when spaced, starts the next write no sooner than delayMs after the last began', async () => {
    const began: number[] = [];
    const batches: number[][] = [];
    const { promise: firstStarted, resolve: started } = deferred();
    const gc = new GroupCommit<number>(
      async (items) => {
        began.push(performance.now());
        batches.push(items);
        if (batches.length === 1) started();
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      60,
      { spaced: true },
    );
    const first = gc.add(1);
    await firstStarted;
    await Promise.all([first, gc.add(2), gc.add(3)]);
    expect(batches).toEqual([[1], [2, 3]]);
    // Unspaced, the next write would begin once the first ended, 5 ms on. A timer may fire a
    // millisecond or two early by the event loop's cached clock (a CI run saw 58.7 ms).
    expect(began[1] - began[0]).toBeGreaterThanOrEqual(55);
  });

  it('when spaced, close writes what waits without waiting for the spacing', async () => {
    const batches: number[][] = [];
    const { promise: firstStarted, resolve: started } = deferred();
    const gc = new GroupCommit<number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) started();
        await new Promise((resolve) => setTimeout(resolve, 5));
      },
      10_000,
      { maxBatch: 2, spaced: true },
    );
    // A full batch is written at once, so the first write needs no timer.
    const first = [gc.add(1), gc.add(2)];
    await firstStarted;
    const third = gc.add(3);
    const closing = performance.now();
    await gc.close();
    await Promise.all([...first, third]);
    expect(batches).toEqual([[1, 2], [3]]);
    expect(performance.now() - closing).toBeLessThan(5_000);
  });
});
