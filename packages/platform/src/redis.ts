import Redis, { type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

// Reconnects at most this far apart while Redis is away, so a request queued meanwhile learns
// within about two attempts (maxRetriesPerRequest) whether Redis is back, not after seconds.
const MAX_RECONNECT_DELAY_MS = 500;

/**
 * A Redis client that queues commands while reconnecting and logs connection errors once each;
 * commands issued in one turn of the event loop go out as one pipeline (`options` adds to that).
 * A command unanswered for `commandTimeoutMs` fails ("Command timed out", which isUnreachable
 * knows): a Redis that hangs (stopped, or cut off without a reset) refuses requests as unavailable
 * instead of holding them.
 */
export function createRedis(
  url: string,
  logger: Logger,
  commandTimeoutMs: number,
  options: RedisOptions = {},
): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    lazyConnect: false,
    commandTimeout: commandTimeoutMs,
    // A command in flight when the connection drops is not sent again after the reconnect,
    // perhaps to a Redis started anew, where one whose caller already gave up (timed out) would
    // act with nobody waiting; its caller learns of the drop at the command timeout instead.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS),
    ...options,
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    if (err.message !== lastError) logger.warn({ err }, 'Redis connection error');
    lastError = err.message;
  });
  redis.on('ready', () => {
    lastError = '';
  });
  return redis;
}

// Deletes KEYS[1] only while it holds ARGV[1].
const DELETE_IF_HELD = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', unpack(KEYS)) end return 0`;

/**
 * Frees `key` if it still holds `claim` (this request's own), with the `also` keys claimed
 * alongside it, never what another request holds or made since. Sent as EVAL, not EVALSHA, whose
 * NOSCRIPT answer would send the body after later commands: Redis runs it after every command
 * sent before it on the connection, so it also frees a claim whose own command timed out but may
 * yet run. Never rejects.
 */
export function releaseClaim(redis: Redis, key: string, claim: string, ...also: string[]): Promise<void> {
  return redis.eval(DELETE_IF_HELD, 1 + also.length, key, ...also, claim).then(
    () => undefined,
    () => undefined,
  );
}

/** Deletes every key under `prefix`, a thousand at a time: for tests and benchmarks. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}
