import pino from 'pino';
import { type PrivateStore, startPrivateStore } from '../../../test/support/private-store';
import { toAppError } from './errors';
import { createRedis } from './redis';

let own: PrivateStore;

beforeAll(async () => {
  own = await startPrivateStore('redis');
});

afterAll(async () => {
  await own?.remove();
});

describe('createRedis', () => {
  it('fails a command unanswered in time, and never sends it again to the Redis that comes back', async () => {
    const redis = createRedis(own.url, pino({ level: 'silent' }), 300);
    try {
      await redis.ping();
      await own.pause();
      const started = Date.now();
      await expect(redis.set('claimed', 'x', 'NX')).rejects.toThrow('Command timed out');
      expect(Date.now() - started).toBeLessThan(2000);
      // The hung Redis is replaced by an empty one, as a restarted pod without persistence is.
      await own.kill();
      await own.restart();
      await new Promise<void>((resolve) => {
        if (redis.status === 'ready') resolve();
        else redis.once('ready', () => resolve());
      });
      expect(await redis.get('claimed')).toBeNull();
    } finally {
      redis.disconnect();
    }
  });

  it('answers a write refused by a full Redis (maxmemory, noeviction) as unavailable, not internal', async () => {
    await own.up();
    const redis = createRedis(own.url, pino({ level: 'silent' }), 2000);
    try {
      await redis.config('SET', 'maxmemory-policy', 'noeviction');
      await redis.config('SET', 'maxmemory', '1');
      const refused = [
        await redis.set('k', 'v').catch((e: unknown) => e),
        // A script that may write is refused the same way before it runs.
        await redis.eval("return redis.call('SET', KEYS[1], 'v')", 1, 'k').catch((e: unknown) => e),
      ];
      for (const err of refused) {
        expect(String((err as Error).message)).toContain('OOM command not allowed');
        expect(toAppError(err).toBody()).toMatchObject({ code: 'unavailable', retryable: true });
      }
      // Reads go on.
      expect(await redis.get('k')).toBeNull();
    } finally {
      await redis.config('SET', 'maxmemory', '0').catch(() => undefined);
      redis.disconnect();
    }
  });
});
