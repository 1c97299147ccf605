import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { serveMiddleware, withGrant } from '../../test/support/koa';
import { RateLimiter } from '../rate-limiter';
import { rateLimitPerKey } from './rate-limit';

const prefix = `test:${uniqueName('rlk')}:`;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_SERVERS.redis);
});
afterAll(async () => {
  await clearRedisPrefix(prefix);
  await redis.quit();
});

test("the key's own limit applies, with headers on success and refusal", async () => {
  const registry = new Registry();
  const refusals = new Counter({ name: 'r', help: 'r', labelNames: ['reason'], registers: [registry] });
  const s = await serveMiddleware([
    withGrant({ keyId: 'key_small', rateLimitPerMinute: 2 }),
    rateLimitPerKey(new RateLimiter(redis, prefix), refusals),
  ]);
  try {
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.url}/p/x`);
      statuses.push(r.status);
      expect(r.headers.get('x-ratelimit-limit')).toBe('2');
      expect(r.headers.get('ratelimit')).toMatch(/^"per-key";r=\d+;t=\d+$/);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(await registry.getSingleMetricAsString('r')).toMatch(/reason="key"\} 1/);
  } finally {
    await s.close();
  }
});
