import { AppError } from '@outreach/platform';
import { type Grant, GrantCache } from './grant-cache';

const grant = (over: Partial<Grant> = {}): Grant => ({
  keyId: 'key_1',
  projectId: 'prj_a',
  scopes: ['recipients:read'],
  rateLimitPerMinute: 600,
  expiresAt: null,
  ...over,
});

function setup(g: Grant | (() => Grant), ttl = 1000) {
  let now = Date.parse('2026-11-22T10:00:00.000Z');
  const calls: string[] = [];
  const cache = new GrantCache(
    async (hash) => {
      calls.push(hash);
      return typeof g === 'function' ? g() : g;
    },
    () => new Date(now),
    ttl,
  );
  const advance = (ms: number) => {
    now += ms;
  };
  return { cache, calls, advance };
}

test('a grant is reused for at most the lifetime, then looked up again', async () => {
  const { cache, calls, advance } = setup(grant());
  await cache.get('h');
  advance(999);
  await cache.get('h');
  expect(calls).toHaveLength(1);
  advance(1);
  await cache.get('h');
  expect(calls).toHaveLength(2);
});

test('concurrent look-ups of one hash share a backend call', async () => {
  const { cache, calls } = setup(grant());
  await Promise.all([cache.get('h'), cache.get('h'), cache.get('h')]);
  expect(calls).toHaveLength(1);
});

test('a look-up is made for the request that needs it, and a shared failure names each request', async () => {
  const seen: (string | undefined)[] = [];
  const cache = new GrantCache(
    async (_hash, forwarded) => {
      seen.push(forwarded?.requestId);
      await new Promise((r) => setTimeout(r, 10));
      throw new AppError('internal', undefined, { details: { requestId: forwarded?.requestId } });
    },
    () => new Date(),
  );
  const failures = await Promise.all(
    ['req-1', 'req-2'].map((requestId) => cache.get('h', { requestId }).catch((e: AppError) => e)),
  );
  expect(seen).toEqual(['req-1']);
  expect(failures.map((e) => [e.code, e.details.requestId])).toEqual([
    ['internal', 'req-1'],
    ['internal', 'req-2'],
  ]);
});

test('revoke drops the cached grant and refuses the key from then on', async () => {
  const { cache, calls } = setup(grant());
  await cache.get('h');
  cache.revoke('key_1');
  expect(cache.size).toBe(0);
  await expect(cache.get('h')).rejects.toMatchObject({
    code: 'unauthorized',
    details: { reason: 'revoked' },
  });
  expect(calls).toHaveLength(2);
});

test('an expired key is refused, and a grant never outlives its expiry in the cache', async () => {
  const { cache, advance } = setup(grant({ expiresAt: '2026-11-22T10:00:00.500Z' }), 60_000);
  await cache.get('h');
  advance(500);
  const err = await cache.get('h').catch((e) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err.details.reason).toBe('expired');
});

test('backend refusals pass through unchanged', async () => {
  const cache = new GrantCache(
    async () => {
      throw new AppError('unavailable');
    },
    () => new Date(),
  );
  await expect(cache.get('h')).rejects.toMatchObject({ code: 'unavailable' });
});

test('peek answers only what get would return without a look-up', async () => {
  const { cache, calls, advance } = setup(grant({ expiresAt: '2026-11-22T10:00:05.000Z' }), 10_000);
  expect(cache.peek('h')).toBeUndefined();
  await cache.get('h');
  expect(cache.peek('h')).toEqual(grant({ expiresAt: '2026-11-22T10:00:05.000Z' }));
  advance(5000);
  expect(cache.peek('h')).toBeUndefined();
  expect(calls).toEqual(['h']);
});

test('peek never returns a revoked grant', async () => {
  const { cache } = setup(grant());
  await cache.get('h');
  cache.revoke('key_1');
  expect(cache.peek('h')).toBeUndefined();
});

test('a key counts as lately valid until its source refuses it, it expires or it is revoked', async () => {
  let refuse = false;
  const { cache, advance } = setup(() => {
    if (refuse) throw new AppError('unauthorized', undefined, { details: { reason: 'expired' } });
    return grant({ expiresAt: '2026-11-22T12:00:00.000Z' });
  });
  expect(cache.recentlyValid('h')).toBe(false);
  await cache.get('h');
  expect(cache.recentlyValid('h')).toBe(true);
  // Refused at the source (expired or revoked there while this instance missed the news).
  refuse = true;
  advance(2000);
  await expect(cache.get('h')).rejects.toMatchObject({ code: 'unauthorized' });
  expect(cache.recentlyValid('h')).toBe(false);

  // Past its own expiry, without any look-up.
  refuse = false;
  await cache.get('h');
  expect(cache.recentlyValid('h')).toBe(true);
  advance(2 * 3600_000);
  expect(cache.recentlyValid('h')).toBe(false);

  // Revoked on this instance.
  const other = setup(grant({ keyId: 'key_2' }));
  await other.cache.get('k');
  other.cache.revoke('key_2');
  expect(other.cache.recentlyValid('k')).toBe(false);
});
