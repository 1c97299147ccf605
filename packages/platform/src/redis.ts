import Redis, { type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * A Redis client that queues commands while reconnecting and logs connection errors once each;
 * commands issued in one turn of the event loop go out as one pipeline (`options` adds to that).
 */
export function createRedis(url: string, logger: Logger, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    lazyConnect: false,
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
