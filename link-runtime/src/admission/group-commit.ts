/**
 * Batches concurrent writes into one: callers `add` an item and wait; every `delayMs` (or as soon
 * as `maxBatch` items wait) one `flush` call writes them all, and every caller learns the result
 * of that one write. A flush failure fails only the callers of that batch.
 */
export class GroupCommit<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly delayMs: number,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once `item` is durably written together with its batch. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.maxBatch) this.drain();
      else this.timer ??= setTimeout(() => this.drain(), this.delayMs);
    });
  }

  /** Writes whatever waits now and resolves once every write in progress finished. */
  async close(): Promise<void> {
    this.drain();
    if (this.running === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private drain(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    this.running++;
    this.flush(batch.map((b) => b.item))
      .then(
        () => {
          for (const b of batch) b.resolve();
        },
        (err) => {
          for (const b of batch) b.reject(err);
        },
      )
      .finally(() => {
        this.running--;
        if (this.running === 0) for (const done of this.idle.splice(0)) done();
      });
  }
}
