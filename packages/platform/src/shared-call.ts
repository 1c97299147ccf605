/**
 * Runs `run` for a key at most once at a time: callers asking for a key whose call is under way
 * share that call (its result or its failure); once it has settled, the next caller starts a new
 * one. For lookups many requests need at once, such as a cache miss or a count after data loss.
 */
export function sharedWhileRunning<K, V>(run: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const running = new Map<K, Promise<V>>();
  return (key) => {
    let call = running.get(key);
    if (!call) {
      call = run(key).finally(() => running.delete(key));
      running.set(key, call);
    }
    return call;
  };
}

/**
 * Shares reads of what happened from a point on: a caller asking for a key from `from` joins a
 * read of that key under way only if that read started from `from` or earlier (so it holds all
 * the caller needs), and otherwise starts its own with `run`, which later callers may join. For
 * a burst of callers that each need the events after their own instant, such as the starts in a
 * rolling window.
 */
export function sharedFromWhileRunning<V>(): (
  key: string,
  from: number,
  run: () => Promise<V>,
) => Promise<V> {
  const running = new Map<string, { from: number; call: Promise<V> }>();
  return (key, from, run) => {
    const current = running.get(key);
    if (current && current.from <= from) return current.call;
    const entry = { from, call: run() };
    running.set(key, entry);
    const forget = () => {
      if (running.get(key) === entry) running.delete(key);
    };
    entry.call.then(forget, forget);
    return entry.call;
  };
}
