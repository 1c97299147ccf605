import { status } from '@grpc/grpc-js';
import { coalescedUnary } from './coalesced-unary';

const unimplemented = Object.assign(new Error('12 UNIMPLEMENTED'), { code: status.UNIMPLEMENTED });

function calls(severalFails?: Error, failed?: (err: unknown, items: string[]) => string[]) {
  const log: string[] = [];
  const call = coalescedUnary(
    async (item: string) => {
      log.push(`single ${item}`);
      if (item === 'bad') throw new Error(`no ${item}`);
      return item.toUpperCase();
    },
    async (items: string[]) => {
      log.push(`several ${items.join(',')}`);
      if (severalFails) throw severalFails;
      return items.map((item) => item.toUpperCase());
    },
    { maxBatch: 3, failed },
  );
  return { log, call };
}

test('a lone call goes alone; calls of one turn share one batched call, split at maxBatch', async () => {
  const { log, call } = calls();
  expect(await call('a')).toBe('A');
  expect(await Promise.all(['b', 'c', 'd', 'e'].map(call))).toEqual(['B', 'C', 'D', 'E']);
  expect(log).toEqual(['single a', 'several b,c,d', 'single e']);
});

test('UNIMPLEMENTED falls back to one call per item, each failing alone', async () => {
  const { log, call } = calls(unimplemented);
  const outcomes = await Promise.allSettled(['a', 'bad', 'c'].map(call));
  expect(outcomes).toEqual([
    { status: 'fulfilled', value: 'A' },
    { status: 'rejected', reason: new Error('no bad') },
    { status: 'fulfilled', value: 'C' },
  ]);
  expect(log).toEqual(['several a,bad,c', 'single a', 'single bad', 'single c']);
});

test('any other failure of the batched call fails every call of its batch', async () => {
  const { log, call } = calls(new Error('deadline'));
  const outcomes = await Promise.allSettled(['a', 'b'].map(call));
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  expect(log).toEqual(['several a,b']);
});

test('with failed, any other failure of the batched call is answered per item by it', async () => {
  const { log, call } = calls(new Error('deadline'), (err, items) =>
    items.map((item) => `${item}: ${(err as Error).message}`),
  );
  expect(await Promise.all(['a', 'b'].map(call))).toEqual(['a: deadline', 'b: deadline']);
  // UNIMPLEMENTED still falls back to single calls, not to failed.
  const older = calls(unimplemented, () => ['never']);
  expect(await Promise.all(['c', 'd'].map(older.call))).toEqual(['C', 'D']);
  expect(log).toEqual(['several a,b']);
});
