import { AppError } from '@outreach/platform';
import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { serveMiddleware } from '../../test/support/koa';
import { type Grant, GrantCache } from '../grant-cache';
import { RateLimiter } from '../rate-limiter';
import { authenticate, hashKey } from './authenticate';
import { rateLimitPerKey } from './rate-limit';

const prefix = `test:${uniqueName('auth')}:`;
const good = 'ok_live_0123456789abcdef';
const grant: Grant = {
  keyId: 'key_1',
  projectId: 'prj_a',
  scopes: [],
  rateLimitPerMinute: 600,
  expiresAt: null,
};
let redis: Redis;
let s: Awaited<ReturnType<typeof serveMiddleware>>;
const looked: string[] = [];

beforeAll(async () => {
  redis = new Redis(TEST_SERVERS.redis);
  // The key store is another service; a function stands in for its answer.
  const cache = new GrantCache(
    async (hash) => {
      looked.push(hash);
      if (hash === hashKey(good)) return grant;
      throw new AppError('unauthorized');
    },
    () => new Date(),
  );
  const refusals = new Counter({ name: 'r', help: 'r', labelNames: ['reason'], registers: [new Registry()] });
  s = await serveMiddleware(
    [authenticate({ cache, limiter: new RateLimiter(redis, prefix), failedAuthPerMinute: 2, refusals })],
    { proxy: true },
  );
});
afterAll(async () => {
  await s.close();
  await clearRedisPrefix(prefix);
  await redis.quit();
});

const get = (auth: string | undefined, ip: string) =>
  fetch(`${s.url}/p/x`, { headers: { 'x-forwarded-for': ip, ...(auth ? { authorization: auth } : {}) } });

test('a valid key puts its grant on the context; only the SHA-256 of the key is looked up', async () => {
  const r = await get(`Bearer ${good}`, '10.0.0.1');
  expect(r.status).toBe(200);
  expect(((await r.json()) as { state: { grant: unknown } }).state.grant).toEqual(grant);
  expect(looked).toContain(hashKey(good));
  expect(looked).not.toContain(good);
});

test('failures are 401 with a Bearer challenge and count per address; then 429 before any look-up', async () => {
  // The good key is found valid first (from another address).
  expect((await get(`Bearer ${good}`, '10.0.0.9')).status).toBe(200);
  const a = await get(undefined, '10.0.0.2');
  expect(a.status).toBe(401);
  expect(a.headers.get('www-authenticate')).toBe('Bearer realm="outreach"');
  expect(a.headers.get('x-ratelimit-remaining')).toBe('1');
  const b = await get('Bearer ok_live_nope_nope_nope', '10.0.0.2');
  expect(b.status).toBe(401);
  expect(b.headers.get('www-authenticate')).toContain('invalid_token');
  const before = looked.length;
  const c = await get('Bearer ok_live_third_guess_xx', '10.0.0.2');
  expect(c.status).toBe(429);
  expect(c.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(looked.length).toBe(before);
  // A key found valid is no guess: it is looked up and goes on.
  expect((await get(`Bearer ${good}`, '10.0.0.2')).status).toBe(200);
  expect((await get(`Bearer ${good}`, '10.0.0.3')).status).toBe(200);
});

describe('with the key counted in the same round trip (keyLimit)', () => {
  const fastPrefix = `test:${uniqueName('authfast')}:`;
  const fastKey = 'ok_live_fast_0123456789';
  let fast: Awaited<ReturnType<typeof serveMiddleware>>;
  let lookups = 0;
  beforeAll(async () => {
    const cache = new GrantCache(
      async (hash) => {
        lookups += 1;
        if (hash === hashKey(fastKey)) return { ...grant, keyId: 'key_fast', rateLimitPerMinute: 3 };
        throw new AppError('unauthorized');
      },
      () => new Date(),
      60_000,
    );
    const limiter = new RateLimiter(redis, fastPrefix);
    const refusals = new Counter({
      name: 'r',
      help: 'r',
      labelNames: ['reason'],
      registers: [new Registry()],
    });
    fast = await serveMiddleware(
      [
        authenticate({
          cache,
          limiter,
          failedAuthPerMinute: 1,
          refusals,
          keyLimit: (g) => g.rateLimitPerMinute,
        }),
        rateLimitPerKey(limiter, refusals),
      ],
      { proxy: true },
    );
  });
  afterAll(async () => {
    await fast.close();
    await clearRedisPrefix(fastPrefix);
  });
  const fastGet = (auth: string | undefined, ip: string) =>
    fetch(`${fast.url}/p/x`, {
      headers: { 'x-forwarded-for': ip, ...(auth ? { authorization: auth } : {}) },
    });

  test('a cached grant is counted once per request against its key, with the key headers', async () => {
    const first = await fastGet(`Bearer ${fastKey}`, '10.1.0.1');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    const second = await fastGet(`Bearer ${fastKey}`, '10.1.0.1');
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(lookups).toBe(1);
  });

  test('an address past its failure budget still takes a cached key, counted against the key', async () => {
    expect((await fastGet('Bearer ok_live_wrong_wrong_wrong', '10.1.0.2')).status).toBe(401);
    const guess = await fastGet('Bearer ok_live_other_guess_xx', '10.1.0.2');
    expect(guess.status).toBe(429);
    expect(guess.headers.get('ratelimit-policy')).toBe('"auth-failures";q=1;w=60');
    expect(guess.headers.get('retry-after')).toMatch(/^\d+$/);
    const cached = await fastGet(`Bearer ${fastKey}`, '10.1.0.2');
    expect(cached.status).toBe(200);
    expect(cached.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
    expect(cached.headers.get('x-ratelimit-remaining')).toBe('0');
    const over = await fastGet(`Bearer ${fastKey}`, '10.1.0.3');
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
  });
});
