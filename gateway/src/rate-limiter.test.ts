import Redis from 'ioredis';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../test/support/isolation';
import { RateLimiter, rateLimited, rateLimitHeaders } from './rate-limiter';

const prefix = `test:${uniqueName('rl')}:`;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_SERVERS.redis);
});
afterAll(async () => {
  await clearRedisPrefix(prefix);
  await redis.quit();
});

test('concurrent hits never admit more than the limit (one atomic script)', async () => {
  const limiter = new RateLimiter(redis, prefix);
  const results = await Promise.all(Array.from({ length: 40 }, () => limiter.hit('p', 'burst', 10)));
  expect(results.filter((r) => r.allowed)).toHaveLength(10);
  const last = await limiter.hit('p', 'burst', 10);
  expect(last).toMatchObject({ allowed: false, used: 10, remaining: 0, limit: 10 });
  expect(last.resetInSeconds).toBeGreaterThan(0);
  expect(last.resetInSeconds).toBeLessThanOrEqual(60);
});

test('a peek does not count', async () => {
  const limiter = new RateLimiter(redis, prefix);
  await limiter.hit('p', 'peek', 5, false);
  await limiter.hit('p', 'peek', 5, false);
  expect((await limiter.hit('p', 'peek', 5)).used).toBe(1);
});

test('headers: legacy X- names and the IETF draft fields; refusal has integer Retry-After', async () => {
  const limiter = new RateLimiter(redis, prefix);
  const s = await limiter.hit('per-key', 'hdr', 2);
  const h = rateLimitHeaders(s);
  expect(h).toMatchObject({
    'X-RateLimit-Limit': '2',
    'X-RateLimit-Remaining': '1',
    'X-RateLimit-Used': '1',
    'RateLimit-Policy': '"per-key";q=2;w=60',
  });
  expect(Number(h['X-RateLimit-Reset'])).toBeGreaterThan(Date.now() / 1000);
  const err = rateLimited(s);
  expect(err.code).toBe('rate_limited');
  expect(err.headers['Retry-After']).toMatch(/^\d+$/);
});

test('Redis down is 503 unavailable, not a crash', async () => {
  const dead = new Redis('redis://127.0.0.1:1', {
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    // ioredis waits this long for a socket that never opened to end; the default 2 s outlives the test.
    disconnectTimeout: 10,
  });
  dead.on('error', () => undefined);
  const limiter = new RateLimiter(dead, prefix);
  await expect(limiter.hit('p', 'x', 1)).rejects.toMatchObject({ code: 'unavailable' });
  const gate = { policy: 'g', bucket: 'g', limit: 1 };
  const together = [limiter.hitUnlessGated(gate, 'p', 'x', 1), limiter.hitUnlessGated(gate, 'p', 'x', 1)];
  for (const hit of together) await expect(hit).rejects.toMatchObject({ code: 'unavailable' });
  dead.disconnect();
});

test('a gated hit counts the bucket only while the gate is below its limit, and never counts the gate', async () => {
  const limiter = new RateLimiter(redis, prefix);
  const gate = { policy: 'auth-failures', bucket: 'gate', limit: 2 };
  const open = await limiter.hitUnlessGated(gate, 'per-key', 'gated', 5);
  expect(open.gated).toBe(false);
  expect(open.state).toMatchObject({ policy: 'per-key', limit: 5, used: 1, remaining: 4, allowed: true });
  await limiter.hit('auth-failures', 'gate', 2);
  await limiter.hit('auth-failures', 'gate', 2);
  const shut = await limiter.hitUnlessGated(gate, 'per-key', 'gated', 5);
  expect(shut.gated).toBe(true);
  expect(shut.state).toMatchObject({
    policy: 'auth-failures',
    limit: 2,
    used: 2,
    remaining: 0,
    allowed: false,
  });
  expect(shut.state.resetInSeconds).toBeGreaterThan(0);
  expect((await limiter.hit('p', 'gated', 5, false)).used).toBe(1);
  expect((await limiter.hit('p', 'gate', 2, false)).used).toBe(2);
});

test('concurrent gated hits never admit more than the limit', async () => {
  const limiter = new RateLimiter(redis, prefix);
  const gate = { policy: 'g', bucket: 'gate-burst', limit: 1 };
  const results = await Promise.all(
    Array.from({ length: 30 }, () => limiter.hitUnlessGated(gate, 'p', 'gated-burst', 7)),
  );
  expect(results.filter((r) => r.state.allowed)).toHaveLength(7);
  expect(results.every((r) => !r.gated)).toBe(true);
});

test('gated hits arriving together share one script run, each with the figures of its own turn', async () => {
  const limiter = new RateLimiter(redis, prefix);
  const runs = jest.spyOn(
    redis as unknown as { outreachGatedRateLimit: () => unknown },
    'outreachGatedRateLimit',
  );
  const gate = { policy: 'g', bucket: 'gate-together', limit: 5 };
  const hits = await Promise.all(
    Array.from({ length: 5 }, () => limiter.hitUnlessGated(gate, 'per-key', 'together', 3)),
  );
  expect(runs).toHaveBeenCalledTimes(1);
  runs.mockRestore();
  expect(hits.map((h) => [h.state.used, h.state.remaining, h.state.allowed])).toEqual([
    [1, 2, true],
    [2, 1, true],
    [3, 0, true],
    [3, 0, false],
    [3, 0, false],
  ]);
  expect((await limiter.hit('p', 'together', 3, false)).used).toBe(3);
});

test('two gateways bursting at one key still admit exactly its limit', async () => {
  const other = new Redis(TEST_SERVERS.redis);
  try {
    const gateways = [new RateLimiter(redis, prefix), new RateLimiter(other, prefix)];
    const gate = { policy: 'g', bucket: 'gate-two', limit: 1 };
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => gateways[i % 2].hitUnlessGated(gate, 'p', 'two-gateways', 13)),
    );
    expect(results.filter((r) => r.state.allowed)).toHaveLength(13);
    const used = results.filter((r) => r.state.allowed).map((r) => r.state.used);
    expect(new Set(used).size).toBe(13);
  } finally {
    await other.quit();
  }
});
