/** What `within` answers when the promise took longer than allowed. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Waits for `promise` at most `ms`: its value, or TIMED_OUT. Its timer is cleared as soon as the
 * promise settles and never keeps the process alive, so waits that end early leave nothing
 * behind (a burst of them would otherwise hold a timer each for the full `ms`). A rejection
 * within the time rejects.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
