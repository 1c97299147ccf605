import { type ServiceError, status } from '@grpc/grpc-js';
import { batchPerTurn } from './turn-batch';

type Settled<R> = { value: R } | { error: unknown };

const settled = <R>(call: Promise<R>): Promise<Settled<R>> =>
  call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

/** Options of `coalescedUnary`. */
export interface CoalescedOptions<T, R> {
  /** Most items one batched call carries. */
  maxBatch: number;
  /**
   * Answers a batch whose batched call failed (other than UNIMPLEMENTED), an answer per item, or
   * throws to fail every item of it; without it, the failure itself fails every item.
   */
  failed?: (err: unknown, items: T[]) => R[];
}

/**
 * Unary calls that arrive together (one turn of the event loop, see batchPerTurn) made as one call
 * of a batched method, `several` (a reply per item, in order), and a lone call as its own,
 * `single`: under load the gRPC call itself, not the work it asks for, is most of what each one
 * costs. A server that predates the batched method (during a rolling upgrade) answers
 * UNIMPLEMENTED, and that batch is then made one `single` call per item, each failing alone. Any
 * other failure of `several` goes to `failed`.
 */
export function coalescedUnary<T, R>(
  single: (item: T) => Promise<R>,
  several: (items: T[]) => Promise<R[]>,
  { maxBatch, failed }: CoalescedOptions<T, R>,
): (item: T) => Promise<R> {
  const run = batchPerTurn(
    async (batch: T[]): Promise<Settled<R>[]> => {
      if (batch.length === 1) return [await settled(single(batch[0]))];
      try {
        return (await several(batch)).map((value) => ({ value }));
      } catch (err) {
        if ((err as ServiceError).code === status.UNIMPLEMENTED)
          return Promise.all(batch.map((item) => settled(single(item))));
        if (!failed) throw err;
        return failed(err, batch).map((value) => ({ value }));
      }
    },
    { maxBatch },
  );
  return async (item) => {
    const outcome = await run(item);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}
