import type { Middleware } from 'koa';
import { serveMiddleware } from '../../test/support/koa';
import { jsonBody, requestBody } from './json-body';

test('reads the body once: an earlier reader and the middleware see the same value', async () => {
  let early: unknown;
  const peek: Middleware = async (ctx, next) => {
    early = await requestBody(ctx);
    await next();
  };
  const s = await serveMiddleware([peek, jsonBody], { method: 'post' });
  try {
    const r = await fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(((await r.json()) as { state: { body: unknown } }).state.body).toEqual({ a: 1 });
    expect(early).toEqual({ a: 1 });
    const bad = await fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(bad.status).toBe(400);
    const notJson = await fetch(`${s.url}/p/x`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'a',
    });
    expect(notJson.status).toBe(415);
  } finally {
    await s.close();
  }
});
