import { createLogger, createRedis } from '@outreach/platform';
import Redis from 'ioredis';
import type { Middleware } from 'koa';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { startPrivateStore } from '../../../test/support/private-store';
import { serveMiddleware, withGrant } from '../../test/support/koa';
import { canonicalJson, fingerprintOf, idempotency } from './idempotency';
import { jsonBody } from './json-body';

const prefix = `test:${uniqueName('idem')}:`;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_SERVERS.redis);
});
afterAll(async () => {
  await clearRedisPrefix(prefix);
  await redis.quit();
});

test('canonical JSON ignores key order and spacing, not values', () => {
  expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  expect(fingerprintOf('POST', '/x', { a: 1 })).toBe(fingerprintOf('POST', '/x', { a: 1 }));
  expect(fingerprintOf('POST', '/x', { a: 1 })).not.toBe(fingerprintOf('POST', '/x', { a: 2 }));
  expect(fingerprintOf('POST', '/x', { a: 1 })).not.toBe(fingerprintOf('PATCH', '/x', { a: 1 }));
});

test('replays, refuses a changed body, and does not keep 5xx', async () => {
  let runs = 0;
  let fail = false;
  const handler: Middleware = async (ctx, next) => {
    runs++;
    if (fail) {
      ctx.status = 502;
      ctx.body = { n: runs };
      return;
    }
    ctx.status = 201;
    ctx.set('Location', `/things/${runs}`);
    ctx.body = { n: runs, at: Math.random() };
    await next();
  };
  const s = await serveMiddleware(
    [withGrant({ keyId: 'key_u' }), idempotency({ redis, prefix }), jsonBody, handler],
    { method: 'post' },
  );
  const send = (key: string, body: string) =>
    fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body,
    });
  try {
    const a = await send('one', '{"v":1}');
    const b = await send('one', '{"v":1}');
    expect(b.status).toBe(201);
    expect(await b.text()).toBe(await a.text());
    expect(b.headers.get('location')).toBe('/things/1');
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(runs).toBe(1);
    const c = await send('one', '{"v":2}');
    expect(c.status).toBe(422);
    expect(((await c.json()) as { code: string }).code).toBe('idempotency_key_reused');
    fail = true;
    expect((await send('two', '{}')).status).toBe(502);
    expect((await send('two', '{}')).status).toBe(502);
    expect(runs).toBe(3);
    const noKey = await fetch(`${s.url}/p/x`, { method: 'POST' });
    expect(noKey.status).toBe(502);
    expect(runs).toBe(4);
  } finally {
    await s.close();
  }
});

test('refuses a key sent empty or blank, rather than go on without one', async () => {
  let runs = 0;
  const handler: Middleware = async (ctx) => {
    runs++;
    ctx.status = 201;
    ctx.body = { n: runs };
  };
  const s = await serveMiddleware(
    [withGrant({ keyId: 'key_e' }), idempotency({ redis, prefix }), jsonBody, handler],
    {
      method: 'post',
    },
  );
  try {
    // A blank value reaches the server as an empty one: HTTP drops the spaces around a field value.
    const res = await fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': '' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'invalid_request',
      details: { header: 'Idempotency-Key', rule: 'pattern' },
    });
    expect(runs).toBe(0);
  } finally {
    await s.close();
  }
});

test("a key whose claim went unanswered is free for the client's retry once Redis answers again", async () => {
  // A Redis of the test's own, stopped (SIGSTOP) while the claim is sent, as a hung one would be.
  const own = await startPrivateStore('redis');
  const hung = createRedis(own.url, createLogger('unit', 'silent'), 300);
  let runs = 0;
  const handler: Middleware = async (ctx) => {
    runs++;
    ctx.status = 201;
    ctx.body = { n: runs };
  };
  const s = await serveMiddleware(
    [withGrant({ keyId: 'key_h' }), idempotency({ redis: hung, prefix }), jsonBody, handler],
    { method: 'post' },
  );
  const send = () =>
    fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'hung-claim' },
      body: '{"v":1}',
    });
  try {
    await own.pause();
    let first: Response;
    try {
      first = await send();
    } finally {
      await own.resume();
    }
    expect(first.status).toBe(503);
    // Not 409 "in progress" for the claim's minute: the retry runs the request.
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(runs).toBe(1);
  } finally {
    await s.close();
    await hung.quit();
    await own.remove();
  }
});
