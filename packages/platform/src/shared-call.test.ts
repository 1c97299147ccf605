import { sharedWhileRunning } from './shared-call';

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
