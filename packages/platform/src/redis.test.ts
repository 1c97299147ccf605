import pino from 'pino';
import { type PrivateStore, startPrivateStore } from '../../../test/support/private-store';
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
});
