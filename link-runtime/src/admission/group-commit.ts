/** Options of a GroupCommit. */
export interface GroupCommitOptions {
  /** Most items in one write (default 500); a queue that reaches it is written at once. */
  maxBatch?: number;
  /**
   * Writes also start at least `delayMs` apart: under load, one write per `delayMs` carrying
   * all that arrived meanwhile, for writes that cost about the same whatever they carry.
   */
  spaced?: boolean;
}

/**
 * Batches concurrent writes into one, one write at a time: callers `add` an item and wait.
 * When nothing is being written, the items that arrive within `delayMs` are written together
 * (with 0, those added in the same turn of the event loop, until its check phase);
 * while a write is in progress, arriving items wait for it and go together in the next one
 * (at most `maxBatch` per write; with `spaced`, no sooner than `delayMs` after it began). So
 * batches grow with the load by themselves, and a quiet moment costs only `delayMs`. Every
 * caller learns the result of its own batch's write; a failure fails only the callers of that batch.
 */
export class GroupCommit<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private writing = false;
  private closing = false;
  private readonly idle: (() => void)[] = [];
  private readonly maxBatch: number;
  private readonly spaced: boolean;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly delayMs: number,
    { maxBatch = 500, spaced = false }: GroupCommitOptions = {},
  ) {
    this.maxBatch = maxBatch;
    this.spaced = spaced && delayMs > 0;
  }

  /** Resolves once `item` is durably written together with its batch. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.writing) return;
      if (this.queue.length >= this.maxBatch) this.drain();
      else
        this.timer ??=
          this.delayMs > 0 ? setTimeout(() => this.drain(), this.delayMs) : setImmediate(() => this.drain());
    });
  }

  /** Writes whatever waits now and resolves once nothing is left to write. */
  async close(): Promise<void> {
    this.closing = true;
    if (!this.writing) this.drain();
    if (!this.writing) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private drain(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
    }
    this.timer = undefined;
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) {
      for (const done of this.idle.splice(0)) done();
      return;
    }
    this.writing = true;
    const began = performance.now();
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
        this.writing = false;
        const full = this.queue.length >= this.maxBatch;
        const wait = this.spaced && !this.closing && !full ? began + this.delayMs - performance.now() : 0;
        // What arrived during the write goes now, as it has waited one write already; when
        // spaced, once `delayMs` has passed since this write began, unless a batch is full.
        if (wait > 0 && this.queue.length > 0) this.timer = setTimeout(() => this.drain(), wait);
        else this.drain();
      });
  }
}
