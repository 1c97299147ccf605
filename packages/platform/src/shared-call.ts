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
