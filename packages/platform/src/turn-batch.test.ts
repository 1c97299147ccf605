import { batchPerTurn } from './turn-batch';

test('calls of one turn share a batch per key, in call order, split at maxBatch', async () => {
  const runs: string[][] = [];
  const call = batchPerTurn(
    async (items: string[]) => {
      runs.push(items);
      return items.map((x) => x.toUpperCase());
    },
    { keyOf: (x) => x[0], maxBatch: 2 },
  );
  const results = await Promise.all(['a1', 'b1', 'a2', 'a3'].map(call));
  expect(results).toEqual(['A1', 'B1', 'A2', 'A3']);
  expect(runs).toEqual([['a1', 'a2'], ['a3'], ['b1']]);
  // A call of a later turn starts a new batch.
  expect(await call('a4')).toBe('A4');
  expect(runs.at(-1)).toEqual(['a4']);
});

test('a failing run rejects every call of its batch and only those', async () => {
  const call = batchPerTurn(
    async (items: string[]) => {
      if (items.includes('bad')) throw new Error('boom');
      return items;
    },
    { keyOf: (x) => (x === 'ok' ? 'ok' : 'other') },
  );
  const [bad, alsoBad, ok] = await Promise.allSettled([call('bad'), call('x'), call('ok')]);
  expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'boom' } });
  expect(alsoBad).toMatchObject({ status: 'rejected', reason: { message: 'boom' } });
  expect(ok).toEqual({ status: 'fulfilled', value: 'ok' });
});
