import { sharedFromWhileRunning, sharedWhileRunning } from './shared-call';

describe('sharedWhileRunning', () => {
  it('shares a call under way per key, and starts a new one once it has settled', async () => {
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const lookUp = sharedWhileRunning((key: string) => {
      started.push(key);
      const n = started.length;
      return new Promise<string>((resolve) => finish.set(key, () => resolve(`${key}#${n}`)));
    });
    const a = [lookUp('a'), lookUp('a'), lookUp('a')];
    const b = lookUp('b');
    expect(started).toEqual(['a', 'b']);
    finish.get('a')?.();
    finish.get('b')?.();
    expect(await Promise.all([...a, b])).toEqual(['a#1', 'a#1', 'a#1', 'b#2']);
    // Settled: the next caller of a key starts a call of its own.
    const again = lookUp('a');
    expect(started).toEqual(['a', 'b', 'a']);
    finish.get('a')?.();
    expect(await again).toBe('a#3');
  });

  it('shares a failure with every caller of that call, then tries again', async () => {
    let calls = 0;
    const lookUp = sharedWhileRunning(async (_key: string) => {
      calls++;
      if (calls === 1) throw new Error('store down');
      return 'ok';
    });
    const results = await Promise.allSettled([lookUp('k'), lookUp('k')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    expect(await lookUp('k')).toBe('ok');
    expect(calls).toBe(2);
  });
});

describe('sharedFromWhileRunning', () => {
  it('shares a read under way with callers from its point on, never with one from earlier', async () => {
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const share = sharedFromWhileRunning<string>();
    const read = (key: string, from: number) =>
      share(key, from, () => {
        started.push(from);
        return new Promise<string>((resolve) => finish.push(() => resolve(`${key} from ${from}`)));
      });
    const first = read('r', 100);
    const later = read('r', 150);
    const earlier = read('r', 50);
    // The earlier caller's read is the one under way now: a caller from 120 joins it.
    const after = read('r', 120);
    const other = read('s', 150);
    expect(started).toEqual([100, 50, 150]);
    for (const done of finish) done();
    expect(await Promise.all([first, later, earlier, after, other])).toEqual([
      'r from 100',
      'r from 100',
      'r from 50',
      'r from 50',
      's from 150',
    ]);
    // Settled: the next caller starts a read of its own.
    const again = read('r', 200);
    expect(started).toEqual([100, 50, 150, 200]);
    finish[3]();
    expect(await again).toBe('r from 200');
  });

  it('shares a failure with the callers of that read, then reads again', async () => {
    let reads = 0;
    const share = sharedFromWhileRunning<string>();
    const read = () =>
      share('k', 10, async () => {
        reads++;
        if (reads === 1) throw new Error('store down');
        return 'ok';
      });
    const results = await Promise.allSettled([read(), read()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(reads).toBe(1);
    expect(await read()).toBe('ok');
  });
});
