/** Options of `batchPerTurn`. */
export interface TurnBatchOptions<T> {
  /** Calls share a batch only with calls of the same key (default: all calls share one). */
  keyOf?: (item: T) => string;
  /** Most calls in one batch; more calls of a key are split into several. */
  maxBatch?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the calls made while the event loop handles one round of I/O (until its check phase,
 * `setImmediate`) into batches, and runs each batch once: under load, requests that arrive
 * together then share one query or script instead of paying one each. `run` gets a batch's items
 * in call order and answers each, in the same order; if it throws, every call of that batch
 * rejects with the error. A call made after its request arrived still runs after it.
 */
export function batchPerTurn<T, R>(
  run: (items: T[]) => Promise<R[]>,
  { keyOf = () => '', maxBatch = Number.POSITIVE_INFINITY }: TurnBatchOptions<T> = {},
): (item: T) => Promise<R> {
  let pending = new Map<string, Waiting<T, R>[]>();
  let scheduled = false;

  const settle = async (batch: Waiting<T, R>[]) => {
    try {
      const results = await run(batch.map((w) => w.item));
      for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };

  const flush = () => {
    scheduled = false;
    const batches = pending;
    pending = new Map();
    for (const calls of batches.values())
      for (let i = 0; i < calls.length; i += maxBatch) void settle(calls.slice(i, i + maxBatch));
  };

  return (item) =>
    new Promise((resolve, reject) => {
      const key = keyOf(item);
      let calls = pending.get(key);
      if (!calls) {
        calls = [];
        pending.set(key, calls);
      }
      calls.push({ item, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
