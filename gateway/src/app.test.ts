import { createMetrics, Lifecycle } from '@outreach/platform';
import Redis from 'ioredis';
import pino from 'pino';
import { buildApp } from './app';
import type { Backends } from './clients';
import { GrantCache } from './grant-cache';

test('every rate-limit reason is exported at 0 from the start, so the first refusals count in increase()', async () => {
  const logger = pino({ level: 'silent' });
  const metrics = createMetrics('gateway');
  // Never connected: building the app touches neither Redis nor the backends.
  const redis = new Redis({ lazyConnect: true });
  try {
    buildApp({
      logger,
      redis,
      redisPrefix: 'test:',
      backends: {} as Backends,
      grants: new GrantCache(
        async () => Promise.reject(new Error('unused')),
        () => new Date(),
      ),
      metrics,
      lifecycle: new Lifecycle(logger),
      dependencies: async () => ({}),
      trustProxy: false,
    });
    const text = await metrics.registry.metrics();
    for (const reason of ['key', 'address', 'auth_failures'])
      expect(text).toMatch(
        new RegExp(`^gateway_rate_limited_total\\{reason="${reason}",service="gateway"\\} 0$`, 'm'),
      );
  } finally {
    redis.disconnect();
  }
});
